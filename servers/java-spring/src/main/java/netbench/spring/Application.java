package netbench.spring;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * netbench reference server on Spring Boot: Spring MVC ({@link Routes}, a
 * {@code @RestController}) on the embedded Tomcat, with Spring Boot's defaults (Tomcat's NIO
 * connector, up to 200 request threads).
 *
 * <p>Environment: {@code HOST} (default 127.0.0.1), {@code PORT} (default 1234), mapped to
 * {@code server.address} and {@code server.port} in application.properties. Optional first
 * argument {@code 0} or {@code 1}: {@code /} answers as {@code /blank} or {@code /work}.
 */
@SpringBootApplication
public class Application {
    /** What {@code /} answers, chosen by the optional first command-line argument. */
    public enum Root { NOT_FOUND, BLANK, WORK }

    /**
     * Starts the application with {@code root} as the bean that {@link Routes} consults; more
     * Spring Boot arguments ({@code --server.port=0}) may follow.
     */
    public static ConfigurableApplicationContext start(Root root, String... springArgs) {
        SpringApplication app = new SpringApplication(Application.class);
        app.addInitializers(context -> context.getBeanFactory().registerSingleton("root", root));
        return app.run(springArgs);
    }

    /** The port Tomcat listens on (the real one when started with server.port=0). */
    public static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    public static void main(String[] args) {
        Root root = Root.NOT_FOUND;
        if (args.length > 0) {
            switch (args[0]) {
                case "0":
                    root = Root.BLANK;
                    break;
                case "1":
                    root = Root.WORK;
                    break;
                default:
                    System.err.println("usage: java -jar server.jar [0|1]  (0: / is /blank, 1: / is /work)");
                    System.exit(2);
            }
        }
        // SIGTERM: Spring Boot's shutdown hook closes the context, which stops Tomcat.
        start(root);
    }
}
