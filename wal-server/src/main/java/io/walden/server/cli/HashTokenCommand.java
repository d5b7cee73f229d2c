package io.walden.server.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.server.auth.LogGlob;
import io.walden.server.auth.Role;
import io.walden.server.auth.Tokens;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code walden hash-token}: a token on standard input becomes its entry of {@code --auth-tokens} (docs/operations.md,
 * "Tokens and roles"): the token's SHA-256, its role and its log patterns. The token never appears in a command line
 * ({@code ps}) or in the file.
 */
@Command(name = "hash-token", mixinStandardHelpOptions = true, usageHelpWidth = WaldenCli.HELP_WIDTH, sortOptions = false,
        description = {"Read a token on standard input and print its entry for the --auth-tokens file of walden serve.",
                "The entry holds the token's SHA-256, never the token: keep the token with the application that sends it.",
                "Standard input is one line (its newline is not part of the token).",
                "",
                "  openssl rand -hex 32 > orders-app.token",
                "  echo 'tokens:' > tokens.yaml",
                "  walden hash-token --role append --log 'orders*' < orders-app.token >> tokens.yaml",
                ""})
final class HashTokenCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Option(names = "--role", paramLabel = "ROLE", defaultValue = "read", description = "What the token may do: read "
            + "(reads, streams, cursors), append (and appends) or admin (and creating, changing, deleting logs and every "
            + "/admin endpoint). Default: ${DEFAULT-VALUE}, the least.")
    String role;

    @Option(names = "--log", paramLabel = "PATTERN", description = "A glob of the logs the token may use (orders*, "
            + "{orders,invoices}); repeat it for more. Default: every log.")
    List<String> logs = new ArrayList<>();

    @Override
    public Integer call() throws IOException {
        Role r;
        try {
            r = Role.parse(role);
        } catch (IllegalArgumentException e) {
            throw new UserError("--role: " + e.getMessage());
        }
        List<String> patterns = new ArrayList<>();
        for (String log : logs) {
            try {
                patterns.add(JSON.writeValueAsString(LogGlob.parse(log).toString())); // a JSON string is a YAML one
            } catch (IllegalArgumentException e) {
                throw new UserError("--log: " + e.getMessage());
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e); // a String always writes
            }
        }
        String token = token(new String(System.in.readAllBytes(), StandardCharsets.UTF_8));
        StringBuilder entry = new StringBuilder()
                .append("  - sha256: ").append(HexFormat.of().formatHex(Tokens.sha256(token))).append('\n')
                .append("    role: ").append(r.configName()).append('\n');
        if (!patterns.isEmpty()) {
            entry.append("    logs: [").append(String.join(", ", patterns)).append("]\n");
        }
        System.out.print(entry);
        return 0;
    }

    /** The token in what standard input held: one line, its line ending not part of it. */
    private static String token(String input) {
        int newline = input.indexOf('\n');
        String line = newline < 0 ? input : input.substring(0, newline);
        if (newline >= 0 && !input.substring(newline + 1).isEmpty()) {
            throw new UserError("standard input holds more than one line: give one token, on one line");
        }
        if (line.endsWith("\r")) {
            line = line.substring(0, line.length() - 1);
        }
        if (line.isEmpty()) {
            throw new UserError("standard input holds no token: give one, e.g. walden hash-token < app.token");
        }
        for (int i = 0; i < line.length(); i++) {
            if (Character.isWhitespace(line.charAt(i)) || Character.isISOControl(line.charAt(i))) {
                throw new UserError("the token holds a space or a control character (at " + (i + 1) + "): an "
                        + "Authorization header could not carry it");
            }
        }
        return line;
    }
}
