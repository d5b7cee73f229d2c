package io.walden.server.cli;

/**
 * A mistake in what the user asked for (a flag's value, a directory in the wrong state): the command says it in one
 * line and exits with status 2, without a stack trace (see {@link WaldenCli#commandLine()}).
 */
final class UserError extends RuntimeException {
    UserError(String message) {
        super(message, null, false, false);
    }
}
