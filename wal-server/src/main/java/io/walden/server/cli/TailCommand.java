package io.walden.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.walden.core.Lsn;
import io.walden.core.RecordTime;
import io.walden.server.http.LogPaths;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.Callable;

/**
 * {@code walden tail}: Kafka's console consumer for Walden. Prints the records of a running server from an LSN, or
 * from a consumer cursor's position, one payload per line (or one JSON object per line), page by page through
 * {@code GET /v1/records}, or {@code /v1/logs/<log>/records} with {@code --log} (docs/http-api.md); stops at the end of the log unless {@code --follow}, which long-polls
 * for new records. With {@code --cursor}, the cursor moves past each page once it is printed and flushed, so a
 * restarted tail resumes after the last page it printed: at least once, never a gap. SIGINT (Ctrl-C) ends it; the
 * page being printed may then be printed again by the next tail.
 */
@Command(name = "tail", mixinStandardHelpOptions = true, usageHelpWidth = WaldenCli.HELP_WIDTH,
        description = {"Print the records of a running server, one payload per line.",
                "From --from or a --cursor's position; stops at the end of the log unless --follow. With --cursor, the",
                "cursor moves past each printed page, so a restarted tail resumes after it.", ""})
final class TailCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Mixin
    ServerConnection server;

    @Option(names = "--log", paramLabel = "NAME", description = "Print this log's records (default: the log named default, "
            + "at /v1/records); --cursor is then one of its cursors.")
    String log;

    @Option(names = "--from", paramLabel = "LSN", description = "First record (X/Y or decimal; default: the oldest kept, "
            + "or the cursor's position).")
    String from;

    @Option(names = "--from-time", paramLabel = "TIME", description = "Start at the first record appended at or after "
            + "this RFC 3339 time (2026-11-25T10:00:00Z, or with an offset), instead of --from.")
    String fromTime;

    @Option(names = "--cursor", paramLabel = "NAME", description = "Start at this consumer cursor and move it past each "
            + "printed page (created at --from or --from-time, or at the oldest record, when it does not exist; an "
            + "existing cursor takes neither: it resumes where it is).")
    String cursor;

    @Option(names = "--follow", description = "At the end of the log, wait for new records instead of stopping.")
    boolean follow;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "text",
            description = "text: each payload as it is, then a newline; json: {\"lsn\",\"type\",\"time\",\"payload\"} per line "
                    + "(payload_base64 instead when it is not UTF-8). Default: ${DEFAULT-VALUE}.")
    String format;

    @Option(names = "--page", paramLabel = "N", defaultValue = "1000", description = "Records per read (default: ${DEFAULT-VALUE}).")
    int page;

    /** The paths of {@code --log}'s records and cursors. */
    LogPaths paths() {
        return LogPaths.of(LogName.checked(log));
    }

    @Override
    public Integer call() throws Exception {
        LogPaths paths = paths(); // a bad --log is said before anything is read
        boolean json = switch (format) {
            case "text" -> false;
            case "json" -> true;
            default -> throw new UserError("--format must be text or json, not '" + format + "'");
        };
        if (from != null) {
            Lsn.parse(from); // a malformed LSN is the user's mistake, said before anything is read
        }
        if (fromTime != null) {
            if (from != null) {
                throw new UserError("give --from or --from-time, not both");
            }
            try {
                RecordTime.parse(fromTime); // said here, before anything is read
            } catch (IllegalArgumentException e) {
                throw new UserError("--from-time: " + e.getMessage());
            }
        }
        // Where the cursor is (null: it does not exist yet), asked before anything is read or printed: a name no cursor
        // can have is refused here by the server, as every cursor route refuses it.
        String committed = cursor == null ? null : cursorPosition(paths);
        if (committed != null && (from != null || fromTime != null)) {
            // Refused rather than obeyed: starting elsewhere and then moving the cursor past what was printed would
            // skip the records between the cursor and --from without ever printing them (or print some twice).
            throw new UserError("cursor " + cursor + " exists (at " + committed + "), and a cursor resumes where it is: "
                    + "drop " + (from != null ? "--from" : "--from-time") + " to resume from it, or use another cursor "
                    + "name (or DELETE " + paths.cursor(cursor) + ") to start elsewhere");
        }
        PrintStream out = new PrintStream(System.out, false);
        Runtime.getRuntime().addShutdownHook(new Thread(out::flush, "walden-tail-flush"));
        String position = from; // null: the oldest record kept
        boolean fromCursor = committed != null;
        boolean byTime = fromTime != null;
        while (true) {
            StringBuilder query = new StringBuilder(paths.records()).append("?limit=").append(page);
            if (fromCursor) {
                query.append("&cursor=").append(URLEncoder.encode(cursor, StandardCharsets.UTF_8));
            } else if (byTime) {
                query.append("&from_time=").append(URLEncoder.encode(fromTime, StandardCharsets.UTF_8));
            } else if (position != null) {
                query.append("&from=").append(position);
            }
            if (follow) {
                query.append("&wait_ms=30000");
            }
            ServerConnection.Answer a = server.get(query.toString(), Duration.ofSeconds(90));
            if (!a.ok()) {
                throw new UserError("read failed: " + a.error());
            }
            JsonNode records = a.body().get("records");
            for (JsonNode r : records) {
                byte[] payload = Base64.getDecoder().decode(r.get("data").asText());
                if (json) {
                    out.println(jsonLine(r, payload));
                } else {
                    out.write(payload);
                    out.write('\n');
                }
            }
            out.flush();
            if (out.checkError()) {
                // The reader went away (a closed pipe: the JVM ignores SIGPIPE and PrintStream hides the error): stop
                // before the cursor moves past a page nobody received.
                throw new UserError("standard output was closed: stopped" + (cursor == null ? ""
                        : committed == null ? "; cursor " + cursor + " was not created"
                        : "; cursor " + cursor + " stays at " + committed + ", before the page being printed"));
            }
            if (records.isEmpty()) {
                if (!follow) {
                    return 0;
                }
                continue; // the long poll ended with nothing new: ask again from the same place
            }
            position = a.body().get("next").asText();
            fromCursor = false;
            byTime = false;
            if (cursor != null) {
                commit(paths, position);
                committed = position;
            }
        }
    }

    /** Where the cursor is (the first read then starts at it), or null when it does not exist (the first commit creates it). */
    private String cursorPosition(LogPaths paths) throws IOException, InterruptedException {
        ServerConnection.Answer a = server.get(paths.cursor(URLEncoder.encode(cursor, StandardCharsets.UTF_8)),
                Duration.ofSeconds(30));
        if (a.ok()) {
            return a.body().get("lsn").asText();
        }
        if (a.status() == 404) {
            return null;
        }
        throw new UserError("cursor " + cursor + ": " + a.error());
    }

    private void commit(LogPaths paths, String lsn) throws IOException, InterruptedException {
        ServerConnection.Answer a = server.put(paths.cursor(URLEncoder.encode(cursor, StandardCharsets.UTF_8)),
                JSON.writeValueAsString(JSON.createObjectNode().put("lsn", lsn)));
        if (!a.ok()) {
            throw new UserError("moving cursor " + cursor + " to " + lsn + " failed: " + a.error());
        }
    }

    private static String jsonLine(JsonNode record, byte[] payload) throws IOException {
        ObjectNode o = JSON.createObjectNode();
        o.put("lsn", record.get("lsn").asText());
        o.put("type", record.get("type").asInt());
        o.set("time", record.get("time"));
        String text = utf8(payload);
        if (text != null) {
            o.put("payload", text);
        } else {
            o.put("payload_base64", record.get("data").asText());
        }
        return JSON.writeValueAsString(o);
    }

    /** The payload as text when it is valid UTF-8, else null. */
    private static String utf8(byte[] payload) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(payload)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
