package netbench.spring;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * The contract's endpoints. Unknown paths and wrong methods are left to Spring MVC and Spring
 * Boot's error handling (404 and 405, with Spring Boot's JSON error body).
 */
@RestController
class Routes {
    private final Work work;
    private final Application.Root root;

    Routes(Work work, Application.Root root) {
        this.work = work;
        this.root = root;
    }

    @GetMapping(path = "/blank", produces = MediaType.TEXT_PLAIN_VALUE)
    String blank() {
        return "OK";
    }

    /**
     * The raw body stream (Spring MVC's {@code InputStream} argument), decoded from
     * Content-Length or chunked framing by Tomcat; {@link Work} parses it with Jackson. Not
     * {@code @RequestBody byte[]}: for a body sent as {@code application/x-www-form-urlencoded}
     * (curl's default for {@code --data-binary}) Spring rebuilds that argument from the form
     * parameters Tomcat parsed, which re-encodes the JSON.
     */
    @PostMapping(path = "/work")
    ResponseEntity<byte[]> work(InputStream body) throws BadRequest, IOException {
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(work.answer(body.readAllBytes()));
    }

    @GetMapping(path = "/echo/{text}", produces = MediaType.TEXT_PLAIN_VALUE)
    String echo(@PathVariable String text) {
        return text;
    }

    @GetMapping(path = "/", produces = MediaType.TEXT_PLAIN_VALUE)
    String rootGet() {
        if (root != Application.Root.BLANK) {
            throw new ResponseStatusException(HttpStatus.NOT_FOUND);
        }
        return blank();
    }

    @PostMapping(path = "/")
    ResponseEntity<byte[]> rootPost(InputStream body) throws BadRequest, IOException {
        if (root != Application.Root.WORK) {
            throw new ResponseStatusException(HttpStatus.NOT_FOUND);
        }
        return work(body);
    }

    @ExceptionHandler(BadRequest.class)
    ResponseEntity<byte[]> badRequest(BadRequest e) {
        return ResponseEntity.badRequest().contentType(MediaType.TEXT_PLAIN)
                .body(e.getMessage().getBytes(StandardCharsets.UTF_8));
    }
}
