package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Child JVMs working on a store are killed (SIGKILL) at random moments: in the middle of creating and deleting logs,
 * and while appending to a hundred logs at LOCAL from several threads. After each kill the store opens; a log is
 * wholly there or not at all; every acknowledged record of every log is back, in its own log, intact. Iterations:
 * {@code -Dwalden.crash.iterations} (default 8; -Psoak: 200), halved here.
 */
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on the children it kills
class WalStoreCrashTest {
    @TempDir
    Path dir;

    private final Random random = new Random();

    private int iterations() {
        return Math.max(2, Integer.getInteger("walden.crash.iterations", 8) / 2);
    }

    private WalStore reopen(Path store) {
        return WalStore.open(WalStoreConfig.builder(store).defaults(b -> b.segmentSize(SMALL_SEGMENT)).build());
    }

    @Test
    void aLogKilledInTheMiddleOfItsCreationOrDeletionIsWhollyThereOrNotAtAll() throws Exception {
        Path store = dir.resolve("store");
        Path stderr = dir.resolve("child.err");
        Map<String, Long> created = new HashMap<>(); // name -> the LSN of its one record
        Set<String> deleted = new HashSet<>();
        Set<String> begun = new HashSet<>(); // creations or deletions begun, not known to have ended
        int next = 0;
        for (int i = 0; i < iterations(); i++) {
            try (ChildJvm child = ChildJvm.start(StoreChurner.class, stderr, store.toString(),
                    String.valueOf(SMALL_SEGMENT), String.valueOf(next))) {
                assertThat(child.awaitReady(60, TimeUnit.SECONDS)).as("child started (see %s)", stderr).isTrue();
                // Its first creation done (a new JVM's first one is slow: class loading), the moment of the kill.
                Eventually.holdsWithin(60, () -> child.lines().stream().anyMatch(l -> l.startsWith("C ")));
                child.killWithin(random, 0, 500);
                for (String line : child.lines()) {
                    String[] f = line.split(" ");
                    switch (f[0]) {
                        case "c", "d" -> begun.add(f[1]);
                        case "C" -> {
                            begun.remove(f[1]);
                            created.put(f[1], Long.parseLong(f[2]));
                        }
                        case "D" -> {
                            begun.remove(f[1]);
                            deleted.add(f[1]);
                        }
                        default -> throw new AssertionError("unexpected line from the child: " + line);
                    }
                    if (f[0].equals("c")) {
                        next = Math.max(next, Integer.parseInt(f[1].substring("log-".length())) + 1);
                    }
                }
            }
            next += 2; // a name the killed child may have half created is never reused: it may exist now
            next += next % 2; // the churner deletes the even one of each pair
            try (WalStore s = reopen(store); Stream<Path> left = Files.list(store.resolve(WalStore.LOGS))) {
                assertThat(left.map(p -> p.getFileName().toString())).as("nothing half made or half deleted")
                        .allMatch(WalStore.NAME.asPredicate());
                for (Map.Entry<String, Long> e : created.entrySet()) {
                    String name = e.getKey();
                    if (deleted.contains(name)) {
                        assertThat(s.log(name)).as("%s was deleted", name).isEmpty();
                    } else if (!begun.contains(name)) {
                        Wal log = s.log(name).orElseThrow(() -> new AssertionError(name + " was created"));
                        try (WalReader r = log.reader(e.getValue())) {
                            assertThat(TestLogs.string(r.next().payload())).isEqualTo(name);
                        }
                    }
                }
                for (String name : s.names()) { // whatever is there opened whole, the half-created ones included
                    assertThat(s.log(name).orElseThrow().status().segments()).isNotEmpty();
                }
            }
        }
        assertThat(created).as("the children created logs before being killed (their errors: %s)",
                Files.exists(stderr) ? Files.readString(stderr) : "none").hasSizeGreaterThan(iterations());
    }

    @Test
    void everyAcknowledgedRecordOfEveryLogIsBackAfterAKillWhileAppendingToAHundredLogs() throws Exception {
        Path store = dir.resolve("store");
        Path stderr = dir.resolve("child.err");
        Map<String, Map<Long, Long>> acknowledged = new HashMap<>(); // log -> lsn -> seq
        long total = 0;
        for (int i = 0; i < iterations(); i++) {
            total += appendUntilKilled(store, stderr, 100, 8, 800, acknowledged);
            try (WalStore s = reopen(store)) {
                assertThat(s.names()).hasSize(100);
                for (String name : s.names()) {
                    verify(name, s.log(name).orElseThrow(), acknowledged.getOrDefault(name, Map.of()));
                }
            }
        }
        assertThat(total).as("the children acknowledged appends before being killed").isGreaterThan(iterations() * 100L);
    }

    @Test
    void recordsTheLogsFilesLostAfterAKillComeBackFromTheStoreJournal() throws Exception {
        Path store = dir.resolve("store");
        Path stderr = dir.resolve("child.err");
        Map<String, Map<Long, Long>> acknowledged = new HashMap<>(); // log -> lsn -> seq
        long lost = 0;
        for (int i = 0; i < 2; i++) {
            appendUntilKilled(store, stderr, 20, 4, 500, acknowledged);
            // What a power loss does to pages never forced: here, whatever the journal covers of each log's files
            // (its checkpoint forced the rest) is overwritten with garbage.
            lost += StoreJournalFiles.spoilWhatTheJournalCovers(store);
            try (WalStore s = reopen(store)) {
                for (String name : s.names()) {
                    verify(name, s.log(name).orElseThrow(), acknowledged.getOrDefault(name, Map.of()));
                }
            }
        }
        assertThat(lost).as("bytes of the logs' files only the journal held").isPositive();
    }

    @Test
    void everyAcknowledgedRecordIsBackAfterAKillWhileSealedSegmentsAreParkedAndMappedAgainForReaders() throws Exception {
        Path store = dir.resolve("store");
        Path stderr = dir.resolve("child.err");
        Map<String, Map<Long, Long>> acknowledged = new HashMap<>(); // log -> lsn -> seq
        try (ChildJvm child = ChildJvm.start(StoreAppender.class, stderr, store.toString(),
                String.valueOf(SMALL_SEGMENT), "4", "4", "2", "2")) {
            assertThat(child.awaitReady(60, TimeUnit.SECONDS)).as("child started (see %s)", stderr).isTrue();
            Eventually.waitUntil("segments parked while appends and reads go on (see " + stderr + ")",
                    () -> child.lines().stream().filter(l -> l.startsWith("PARKED ")).count() >= 3);
            child.killWithin(random, 0, 300);
            collectAcknowledged(child.lines(), acknowledged);
            assertThat(child.lines()).as("what the child's readers read").noneMatch(l -> l.startsWith("BAD "));
        }
        try (WalStore s = reopen(store)) {
            for (String name : s.names()) {
                verify(name, s.log(name).orElseThrow(), acknowledged.getOrDefault(name, Map.of()));
            }
        }
    }

    @Test
    void everyAcknowledgedRecordIsBackAfterAKillWhileLogsTakeTurnsWithTheirWalBuffers() throws Exception {
        Path store = dir.resolve("store");
        Path stderr = dir.resolve("child.err");
        Map<String, Map<Long, Long>> acknowledged = new HashMap<>(); // log -> lsn -> seq
        // Eight logs of 64 KiB rings, a budget of two: every append to a log not holding its ring takes one back from
        // a quiet log, while four threads append and two read.
        try (ChildJvm child = ChildJvm.start(StoreAppender.class, stderr, store.toString(),
                String.valueOf(SMALL_SEGMENT), "8", "4", "512", "2", String.valueOf(2 * SMALL_SEGMENT))) {
            assertThat(child.awaitReady(60, TimeUnit.SECONDS)).as("child started (see %s)", stderr).isTrue();
            Eventually.waitUntil("WAL buffers given back while appends go on (see " + stderr + ")",
                    () -> child.lines().stream().anyMatch(l -> l.startsWith("GIVEN_BACK ")
                            && Long.parseLong(l.substring("GIVEN_BACK ".length())) >= 50));
            child.killWithin(random, 0, 300);
            collectAcknowledged(child.lines(), acknowledged);
            assertThat(child.lines()).as("what the child's readers read").noneMatch(l -> l.startsWith("BAD "));
        }
        assertThat(acknowledged).as("logs the child appended to").hasSizeGreaterThan(2);
        try (WalStore s = reopen(store)) {
            for (String name : s.names()) {
                verify(name, s.log(name).orElseThrow(), acknowledged.getOrDefault(name, Map.of()));
            }
        }
    }

    @Test
    void everyAcknowledgedRecordIsBackAfterAKillOfLogsThatWentIdleGaveBackTheirFilesAndAppendedAgain() throws Exception {
        Path store = dir.resolve("store");
        Path stderr = dir.resolve("child.err");
        Map<String, Map<Long, Long>> acknowledged = new HashMap<>(); // log -> lsn -> seq
        // Four threads append to logs 0-3 for 2 s, then to logs 4-7 for 2 s, then to 0-3 again: an idle log (here after
        // 0.5 s, its default 5 s shortened) gives back its WAL buffers and every segment file, the one it writes into and
        // the one prepared next included, and its next append maps them again. The kill lands in the third phase, on
        // logs that did all of that.
        try (ChildJvm child = ChildJvm.start(StoreAppender.class, stderr, store.toString(),
                String.valueOf(SMALL_SEGMENT), "8", "4", "512", "0", String.valueOf(WalStoreConfig.DEFAULT_WAL_BUFFERS),
                "2000", "500")) {
            assertThat(child.awaitReady(60, TimeUnit.SECONDS)).as("child started (see %s)", stderr).isTrue();
            Eventually.waitUntil(60, () -> child.lines().contains("PHASE 2"));
            List<String> sofar = new java.util.ArrayList<>(child.lines());
            // While logs 4-7 appended, logs 0-3 went idle and gave their rings back: at most the four busy ones' held.
            assertThat(sofar.subList(sofar.indexOf("PHASE 1"), sofar.indexOf("PHASE 2")))
                    .as("WAL buffers held while half the logs were idle (the child's log: %s)", Files.readString(stderr))
                    .anyMatch(l -> l.startsWith("HELD ") && Long.parseLong(l.substring(5)) <= 4 * SMALL_SEGMENT);
            int atPhase2 = child.lines().size();
            Eventually.waitUntil(30, () -> child.lines().size() >= atPhase2 + 200); // the idle logs append again
            child.killWithin(random, 0, 300);
            List<String> lines = child.lines();
            collectAcknowledged(lines, acknowledged);
            assertThat(lines).as("segment files given back by the idle logs").anyMatch(l -> l.startsWith("PARKED "));
        }
        try (WalStore s = reopen(store)) {
            assertThat(s.names()).hasSize(8);
            for (String name : s.names()) {
                verify(name, s.log(name).orElseThrow(), acknowledged.getOrDefault(name, Map.of()));
            }
        }
    }

    /**
     * Runs a child appending at LOCAL to {@code logs} logs of the store from {@code threads} threads, kills it (SIGKILL)
     * within {@code killWithinMillis} of its first hundred acknowledgements, and adds what it acknowledged.
     *
     * @return how many appends it acknowledged
     */
    private long appendUntilKilled(Path store, Path stderr, int logs, int threads, int killWithinMillis,
                                   Map<String, Map<Long, Long>> acknowledged) throws Exception {
        try (ChildJvm child = ChildJvm.start(StoreAppender.class, stderr, store.toString(),
                String.valueOf(SMALL_SEGMENT), String.valueOf(logs), String.valueOf(threads))) {
            assertThat(child.awaitReady(60, TimeUnit.SECONDS)).as("child started (see %s)", stderr).isTrue();
            Eventually.holdsWithin(60, () -> child.lines().size() >= 100); // appends under way
            child.killWithin(random, 0, killWithinMillis);
            return collectAcknowledged(child.lines(), acknowledged);
        }
    }

    /** Adds the child's {@code A <log> <lsn> <seq>} lines to {@code acknowledged}; returns how many there were. */
    private static long collectAcknowledged(List<String> lines, Map<String, Map<Long, Long>> acknowledged) {
        long n = 0;
        for (String line : lines) {
            String[] f = line.split(" ");
            if (f[0].equals("A")) {
                acknowledged.computeIfAbsent(f[1], k -> new HashMap<>()).put(Long.parseLong(f[2]), Long.parseLong(f[3]));
                n++;
            }
        }
        return n;
    }

    /** Every record of {@code log} is its own and whole; every acknowledged one is there with its payload. */
    private static void verify(String name, Wal log, Map<Long, Long> acknowledged) {
        int found = 0;
        try (WalReader r = log.reader(log.oldestLsn())) {
            for (WalRecord rec; (rec = r.next()) != null; ) {
                long seq = rec.payloadView().order(ByteOrder.BIG_ENDIAN).getLong(0);
                assertThat(rec.payload()).as("record %s of %s", Lsn.format(rec.lsn()), name)
                        .isEqualTo(StoreAppender.payload(name, seq));
                Long acked = acknowledged.get(rec.lsn());
                if (acked != null) {
                    assertThat(seq).isEqualTo(acked);
                    found++;
                }
            }
        }
        assertThat(found).as("acknowledged records of %s", name).isEqualTo(acknowledged.size());
    }
}
