package netbench.helidon;

/** A request body that breaks the contract: answered with 400 and the message as its body. */
final class BadRequest extends Exception {
    private static final long serialVersionUID = 1L;

    BadRequest(String message) {
        super(message, null, false, false);
    }
}
