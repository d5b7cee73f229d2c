package io.walden.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.walden.core.Compression;
import io.walden.core.Durability;
import io.walden.server.http.LogPaths;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code walden append}: Kafka's console producer for Walden. Each line of standard input (or of {@code --file})
 * becomes a record, its bytes exactly as read without the line's end; lines go in batches
 * ({@code POST /v1/records/batch}, or {@code /v1/logs/<log>/records/batch} with {@code --log}: docs/http-api.md), one
 * durability wait per batch. Prints each record's LSN, in
 * order. The first failure stops it: what was appended before stays appended, and the message names the first line
 * that was not.
 */
@Command(name = "append", mixinStandardHelpOptions = true, usageHelpWidth = WaldenCli.HELP_WIDTH,
        description = {"Append each line of standard input (or of --file) to a running server as a record.",
                "Lines go in batches; each record's LSN is printed. The first failure ends it (exit status 2), naming the",
                "first line not appended.", ""})
final class AppendCommand implements Callable<Integer> {
    /** A batch is sent once it holds this many bytes, whatever --batch says: one request never grows past a few MiB. */
    private static final int MAX_BATCH_BYTES = 4 << 20;

    @Mixin
    ServerConnection server;

    @Option(names = "--log", paramLabel = "NAME", description = "Append to this log (default: the log named default, "
            + "at /v1/records).")
    String log;

    @Option(names = "--file", paramLabel = "FILE", description = "Read this file instead of standard input.")
    Path file;

    @Option(names = "--null-separated", description = "Records end with a NUL byte instead of a newline (find -print0).")
    boolean nullSeparated;

    @Option(names = "--batch", paramLabel = "N", defaultValue = "1000",
            description = "Most records per request (default: ${DEFAULT-VALUE}); a batch is sent sooner at 4 MiB, or when the "
                    + "input has nothing more for now.")
    int batch;

    @Option(names = "--durability", paramLabel = "LEVEL",
            description = "off, local, remote_write, on or remote_apply (default: the server's).")
    String durability;

    @Option(names = "--compression", paramLabel = "CODEC", description = "none, lz4 or zstd (default: the server's).")
    String compression;

    @Option(names = "--type", paramLabel = "N", defaultValue = "0", description = "Record type, 0-65535 (default: 0).")
    int type;

    @Option(names = "--quiet", description = "Print no LSNs.")
    boolean quiet;

    @Override
    public Integer call() throws Exception {
        if (batch < 1) {
            throw new UserError("--batch must be at least 1");
        }
        StringBuilder query = new StringBuilder(batchPath()).append("?type=").append(type);
        if (durability != null) {
            query.append("&durability=").append(Durability.parse(durability).configName());
        }
        if (compression != null) {
            query.append("&compression=").append(Compression.parse(compression).configName());
        }
        PrintStream out = new PrintStream(System.out, false);
        int separator = nullSeparated ? 0 : '\n';
        try (InputStream in = new BufferedInputStream(file == null ? System.in : Files.newInputStream(file), 1 << 16)) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            ByteArrayOutputStream record = new ByteArrayOutputStream();
            long line = 0;          // lines read so far
            long firstInBatch = 1;  // the line number of the batch's first record
            int inBatch = 0;
            for (int b = in.read(); ; b = in.read()) {
                if (b != separator && b != -1) {
                    record.write(b);
                    continue;
                }
                if (b == -1 && record.size() == 0) {
                    break; // the input ended with a separator (or was empty): no record after it
                }
                line++;
                writeFramed(body, record);
                record.reset();
                inBatch++;
                // A full batch goes at once; so does a partial one when the input has nothing more for now (a followed
                // log, a person typing): lines are never held back waiting for others that may not come.
                if (inBatch == batch || body.size() >= MAX_BATCH_BYTES || b == -1 || in.available() == 0) {
                    send(query.toString(), body.toByteArray(), firstInBatch, out);
                    body.reset();
                    inBatch = 0;
                    firstInBatch = line + 1;
                }
                if (b == -1) {
                    break;
                }
            }
            if (inBatch > 0) {
                send(query.toString(), body.toByteArray(), firstInBatch, out);
            }
        } finally {
            out.flush();
        }
        return 0;
    }

    /** Where the batches go: the batch path of {@code --log}. */
    String batchPath() {
        return LogPaths.of(LogName.checked(log)).batch();
    }

    /** The batch framing of docs/http-api.md: a 4-byte big-endian length, then the payload. */
    private static void writeFramed(ByteArrayOutputStream body, ByteArrayOutputStream record) throws IOException {
        int n = record.size();
        body.write(new byte[] {(byte) (n >>> 24), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n});
        record.writeTo(body);
    }

    private void send(String query, byte[] body, long firstLine, PrintStream out) throws IOException, InterruptedException {
        ServerConnection.Answer a = server.post(query, body);
        JsonNode written = a.ok() ? a.body().get("lsns") : a.body() == null ? null : a.body().get("written_lsns");
        int done = 0;
        if (written != null) {
            for (JsonNode lsn : written) {
                if (!quiet) {
                    out.println(lsn.asText());
                }
                done++;
            }
        }
        out.flush();
        if (out.checkError()) {
            throw new UserError("standard output was closed after line " + (firstLine + done - 1)
                    + " was appended (use --quiet when nothing reads the LSNs)");
        }
        if (!a.ok()) {
            throw new UserError("line " + (firstLine + done) + " and after not appended: " + a.error()
                    + (done > 0 ? " (lines " + firstLine + " to " + (firstLine + done - 1) + " were)" : ""));
        }
    }
}
