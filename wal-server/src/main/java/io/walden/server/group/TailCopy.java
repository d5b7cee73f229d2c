package io.walden.server.group;

import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.server.config.ServerConfig;
import io.walden.server.http.HeldRecordsApi;
import io.walden.server.logs.LogCatalog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import static io.walden.server.config.ServerSettings.AUTH_TOKEN;
import static io.walden.server.config.ServerSettings.TLS_CERT;

/**
 * The copy an election plans when positions cross ({@link ElectionRule.CatchUp}; docs/operations.md, "When no member
 * holds every log"): this member fetches, log by log, the tail another member holds flushed in the same epoch
 * ({@code GET /admin/held-records} on that member's HTTP address, as it publishes it), applies it verbatim through the
 * path a replica applies its primary's bytes with ({@code ReplicatedLog.writeReceived}: each record's length, prev link
 * and CRC-32C checked before any position moves over it, a refused chunk zeroed again, nothing kept of it), and flushes
 * it. Its controller then publishes the new positions, on which the next election elects it by the usual rule.
 *
 * <p>Guarantees: records are only ever appended whole and at this log's end (never truncated or overwritten), flushed
 * before the controller can publish them (it publishes flushed positions only); a copy that fails part way leaves the
 * records already applied, every one valid and in the donor's epoch, and the next round copies the rest. The donor
 * serves only records of the epoch this member's log ends in, and only while it follows no primary.
 *
 * <p>Authentication: the request carries this member's {@code auth-token} (an admin token: the route needs the
 * {@code admin} role) when it has one; so when the members require tokens, every member needs the same
 * {@code --auth-token} (with {@code --auth-tokens} too, whose file holds hashes only). Over HTTPS when this member
 * serves HTTPS ({@code --tls-cert}): the members' certificates must then be trusted by the JVM's trust store.
 *
 * <p>Thread-safety: for the controller's thread only (the logs refuse appends meanwhile: the member follows nobody).
 */
final class TailCopy {
    private static final Logger LOG = LoggerFactory.getLogger(TailCopy.class);
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    /**
     * A round copies for at most this long, then returns (the next round, a second later, goes on from where it
     * stopped): the controller's thread, which the copy runs on, is also what a stopping server waits for.
     */
    private static final long ROUND_NANOS = Duration.ofSeconds(20).toNanos();

    private final ServerConfig config;
    private final Wal wal;
    private final LogCatalog logs;
    private HttpClient http;

    TailCopy(ServerConfig config, Wal wal, LogCatalog logs) {
        this.config = config;
        this.wal = wal;
        this.logs = logs;
    }

    /**
     * Copies every tail of {@code plan} (made for this member) from the members named in it, as they are in
     * {@code live}.
     *
     * @return true once every tail is held and flushed; false when one could not be (logged at WARN: the next round
     *         retries)
     */
    boolean copy(ElectionRule.CatchUp plan, Map<String, Member> live) throws InterruptedException {
        long deadline = System.nanoTime() + ROUND_NANOS;
        for (ElectionRule.Tail tail : plan.tails()) {
            String failed = copy(tail, live.get(tail.from()), deadline);
            if (failed != null) {
                LOG.warn("Could not copy {} (retrying next round): {}", tail, failed);
                return false;
            }
        }
        return true;
    }

    /** @return null once this tail is held and flushed; else what went wrong */
    private String copy(ElectionRule.Tail tail, Member donor, long deadline) throws InterruptedException {
        Wal log = ServerConfig.DEFAULT_LOG.equals(tail.log()) ? wal : logs.find(tail.log());
        if (log == null || (log != wal && log.status().logId() != tail.logId())) {
            return "this member holds no log '" + tail.log() + "' of id " + Long.toHexString(tail.logId()) + " now";
        }
        if (donor == null) {
            return tail.from() + " is not a member now";
        }
        log.flush(); // a received tail still unforced: the copy continues after it, as the published position will
        long start = log.insertLsn();
        if (start >= tail.toLsn()) {
            return null; // held already (this member's published position lagged its log)
        }
        long position = start;
        int epoch = log.status().history().at(position).number();
        String failed = null;
        try {
            while (position < tail.toLsn() && System.nanoTime() - deadline < 0) {
                HttpResponse<byte[]> answer = fetch(donor, tail, position, epoch);
                if (answer.statusCode() == 204) {
                    break; // the donor holds nothing more below the end asked for
                }
                if (answer.statusCode() != 200) {
                    failed = donor.name() + " answered " + answer.statusCode() + " "
                            + new String(answer.body(), StandardCharsets.UTF_8).strip() + refusalHint(answer.statusCode());
                    break;
                }
                long at = Lsn.parse(answer.headers().firstValue(HeldRecordsApi.START_HEADER).orElseThrow(() ->
                        new IllegalStateException("no " + HeldRecordsApi.START_HEADER + " header in the answer")));
                position = log.replication().writeReceived(at, ByteBuffer.wrap(answer.body()));
            }
        } catch (IOException | RuntimeException e) {
            failed = e.toString();
        }
        String notFlushed = flushed(log); // whatever happened: what was applied is durable before it is published
        if (failed != null || !notFlushed.isEmpty()) {
            return (failed == null ? "the copy" : failed) + notFlushed;
        }
        if (position < tail.toLsn()) {
            return System.nanoTime() - deadline >= 0 ? "copied up to " + Lsn.format(position) + " in this round"
                    : donor.name() + " holds log " + tail.log() + " up to " + Lsn.format(position) + " only, not "
                    + Lsn.format(tail.toLsn());
        }
        LOG.info("Copied log {} [{}, {}) from {} ({} bytes), in epoch {}", tail.log(), Lsn.format(start),
                Lsn.format(position), donor.name(), position - start, epoch);
        return null;
    }

    /**
     * Flushes what the copy applied (whole records, each checked: durable before the controller publishes it); "" once
     * done, else why not (the controller publishes only flushed positions, so nothing unflushed is published then).
     */
    private static String flushed(Wal log) {
        try {
            log.flush();
            return "";
        } catch (RuntimeException e) {
            return "; and what it applied could not be flushed: " + e;
        }
    }

    private HttpResponse<byte[]> fetch(Member donor, ElectionRule.Tail tail, long from, int epoch)
            throws IOException, InterruptedException {
        String scheme = config.get(TLS_CERT) == null ? "http" : "https";
        URI uri = URI.create(scheme + "://" + donor.http() + HeldRecordsApi.PATH + "?log="
                + URLEncoder.encode(tail.log(), StandardCharsets.UTF_8) + "&from=" + Lsn.format(from)
                + "&to=" + Lsn.format(tail.toLsn()) + "&epoch=" + epoch);
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(TIMEOUT).GET();
        String token = config.get(AUTH_TOKEN);
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        if (http == null) {
            http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(TIMEOUT).build();
        }
        return http.send(request.build(), info -> HttpResponse.BodySubscribers.mapping(
                HttpResponse.BodySubscribers.ofInputStream(), TailCopy::atMostOneAnswer));
    }

    /** An answer's bytes, refused past what one answer may hold ({@link HeldRecordsApi#MAX_BYTES}) plus an error's. */
    private static byte[] atMostOneAnswer(InputStream body) {
        try (body) {
            byte[] bytes = body.readNBytes(HeldRecordsApi.MAX_BYTES + 1);
            if (bytes.length > HeldRecordsApi.MAX_BYTES) {
                throw new UncheckedIOException(new IOException("an answer of over " + HeldRecordsApi.MAX_BYTES
                        + " bytes: not a member's held records"));
            }
            return bytes;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** What a refusal of the token asks of the operator. */
    private String refusalHint(int status) {
        if (status != 401 && status != 403) {
            return "";
        }
        return config.get(AUTH_TOKEN) == null
                ? " (this member has no --auth-token: members copy each other's records with it; set the same admin "
                + "--auth-token on every member)"
                : " (members copy each other's records with their --auth-token: set the same one on every member)";
    }
}
