package io.walden.core;

import io.walden.core.internal.JvmAccess;
import io.walden.core.internal.journal.JournalReplay;
import io.walden.core.internal.journal.LogKeys;
import io.walden.core.internal.journal.StoreJournal;
import io.walden.core.internal.recovery.LogOpener;
import io.walden.core.internal.segment.OpenSegments;
import io.walden.core.internal.StoreDirectories;
import io.walden.core.internal.commit.WalBuffersBudget;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.core.internal.thread.BackgroundThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * Many logs in one directory, one per tenant, aggregate type or partition, as Kafka users have topics: each a full
 * {@link Wal} (its own segments, LSNs, cursors, compression, retention, archive and record times), all sharing one set
 * of background threads (a few per kind of job, not a handful per log: docs/glossary.md, "Threads").
 *
 * <p><b>Layout.</b> Log {@code name} lives in {@code <directory>/logs/<name>}, a directory {@link Wal#open} could open
 * on its own. Names are {@code [a-z0-9][a-z0-9._-]{0,127}}, so no name is a file the store keeps beside the logs.
 *
 * <p><b>Crash safety.</b> {@link #create} lays down the new log's files in {@code logs/.creating-<name>} (its settings,
 * its first segment and its control file, each forced, without opening the log there), forces that directory, renames
 * it to its name, and only then opens the log, once, where it stays; {@link #delete} renames the log to
 * {@code logs/.deleting-<name>} before removing its files. Each rename is atomic and forced with its directory, and
 * {@link #open} removes what a crash left under those names. So after a crash at any point, a log is either wholly
 * there or not at all ({@code WalStoreCrashTest} kills child JVMs in the middle of both).
 *
 * <p><b>Shared flushes.</b> Unless {@link WalStoreConfig.Builder#sharedJournal} is off, the logs' durable bytes go
 * through one journal in {@code <directory>/journal} ({@code StoreJournal}): commits to different logs share its
 * {@code fdatasync}, and the store's open writes what it holds back into the logs' files before any log opens. So
 * open a store's log through its store: {@link Wal#open} refuses a directory with a store key
 * ({@code walden.store-key}), since it would miss what the journal holds.
 *
 * <p>Thread-safety: every method from any thread. {@link #create}, {@link #delete} and {@link #close} serialise on the
 * store; {@link #log} and {@link #names} do not wait for them.
 */
public final class WalStore implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WalStore.class);
    /** What a log's name may be. */
    public static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{0,127}");
    /** The directory, in the store's, that holds the logs: log {@code name} is {@code logs/<name>}. */
    public static final String LOGS = "logs";
    static final String CREATING = ".creating-";
    static final String DELETING = ".deleting-";
    /** The file in the store's directory that the open store holds locked. */
    public static final String LOCK = "walden-store.lock";
    /** The shared journal's directory in the store's (see {@link WalStoreConfig.Builder#sharedJournal}). */
    public static final String JOURNAL = StoreJournal.DIRECTORY;

    private final WalStoreConfig config;
    private final Path logs;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final BackgroundThreads threads;
    /** The logs' open segment files, under the store's cap ({@link WalStoreConfig#maxOpenFiles()}). */
    private final OpenSegments files;
    /** The logs' WAL buffers, from one budget ({@link WalStoreConfig#walBuffers()}); not the journal's. */
    private final WalBuffersBudget budget;
    /** What settings each log opens with. */
    private final StoreLogConfigs settings;
    private final Map<String, Wal> open = new ConcurrentHashMap<>();
    /** Each log's key in the journal (see {@link StoreJournal#KEY_FILE}). */
    private final Map<String, Long> keys = new ConcurrentHashMap<>();
    /** The shared journal; null when the store's logs force their own files. */
    private volatile StoreJournal journal;
    /** The journal's own log (closed after the logs and the journal's last checkpoint). */
    private Wal journalLog;
    private boolean closed;

    /**
     * Where a log made outside the store (a restore from an archive) is built before it is renamed, atomically, to its
     * name in {@link #LOGS}: a crash leaves it under a name the store's next {@link #open} removes, never a half-made
     * log under the log's name. Build it only while holding the store's {@link #LOCK} (no store open on it).
     */
    public static Path buildingDirectory(Path directory, String name) {
        checkName(name);
        return directory.resolve(LOGS).resolve(CREATING + name);
    }

    private WalStore(WalStoreConfig config, FileChannel lockChannel, FileLock lock) {
        this.config = config;
        this.logs = config.directory().resolve(LOGS);
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.threads = BackgroundThreads.shared(config.writerThreads());
        this.files = new OpenSegments(config.maxOpenFiles());
        this.budget = new WalBuffersBudget(config.walBuffers());
        this.settings = new StoreLogConfigs(config, budget);
    }

    /**
     * Opens (or creates) the store in {@code config.directory()} and every log in it, each with its recovery (see
     * {@link Wal#open}), after removing what a crash left of a creation or a deletion.
     *
     * @throws WalLockedException when another process or another store holds the directory
     * @throws WalException       on an I/O error, or when a log cannot be opened (the ones opened are closed again)
     */
    public static WalStore open(WalStoreConfig config) {
        JvmAccess.check();
        Path dir = config.directory();
        FileChannel channel = null;
        try {
            Files.createDirectories(dir.resolve(LOGS));
            channel = FileChannel.open(dir.resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock = channel.tryLock();
            if (lock == null) {
                channel.close();
                throw new WalLockedException("the store in " + dir + " is open in another process");
            }
            WalStore store = new WalStore(config, channel, lock);
            try {
                store.openLogs();
            } catch (RuntimeException | IOException e) {
                store.close();
                throw e;
            }
            return store;
        } catch (java.nio.channels.OverlappingFileLockException e) {
            StoreDirectories.closeQuietly(channel);
            throw new WalLockedException("the store in " + dir + " is open in this process already");
        } catch (IOException e) {
            StoreDirectories.closeQuietly(channel);
            throw new WalException("cannot open the store in " + dir + ": " + e.getMessage(), e);
        }
    }

    private void openLogs() throws IOException {
        List<Path> leftovers = new ArrayList<>();
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(logs)) {
            for (Path p : entries) {
                String f = p.getFileName().toString();
                if (f.startsWith(CREATING) || f.startsWith(DELETING)) {
                    leftovers.add(p);
                } else if (NAME.matcher(f).matches() && Files.isDirectory(p)) {
                    names.add(f);
                }
            }
        }
        for (Path p : leftovers) {
            LOG.info("Removing {}: a log's creation or deletion that a crash interrupted", p);
            StoreDirectories.deleteTree(p);
        }
        if (!leftovers.isEmpty()) {
            SegmentFiles.forceDirectory(logs);
        }
        Collections.sort(names);
        for (String name : names) {
            keys.put(name, LogKeys.readOrAssign(logs.resolve(name), keys.values()));
        }
        openJournal();
        for (String name : names) {
            open.put(name, Wal.open(journaledConfigOf(name, logs.resolve(name), b -> { }), threads, files, budget, false));
        }
        LOG.info("Opened the store in {}: {} log(s) on {} shared threads", config.directory(), names.size(),
                threads.threadCount());
    }

    /**
     * Opens the journal and writes what it holds back into the logs' files (before any log opens: a log must find in
     * its files everything it acknowledged). A store whose logs force their own files now writes back what a journal
     * left from before, then removes it.
     */
    private void openJournal() throws IOException {
        Path dir = config.directory().resolve(StoreJournal.DIRECTORY);
        boolean wanted = settings.journalWanted();
        if (!wanted && !Files.exists(dir)) {
            return;
        }
        Wal j = Wal.open(settings.journalConfig(dir), threads, files, null, false); // its ring is its own: every flush needs it
        try {
            Map<Long, Path> dirs = new HashMap<>();
            keys.forEach((name, key) -> dirs.put(key, logs.resolve(name)));
            JournalReplay.replay(j.parts().reads(), dirs);
        } catch (IOException | RuntimeException e) {
            j.close();
            throw e instanceof WalException w ? w : new WalException("could not write the store journal in " + dir
                    + " back into the logs' files: " + e.getMessage(), e);
        }
        if (wanted) {
            journalLog = j;
            journal = new StoreJournal(j.parts().writes(), j.parts().positions(), j.status()::flushCount,
                    j::truncateBefore, j.config(), threads);
        } else {
            j.close();
            StoreDirectories.deleteTree(dir);
            SegmentFiles.forceDirectory(config.directory());
            LOG.info("Removed the store journal in {}: its entries are in the logs' files, which force themselves now", dir);
        }
    }

    /**
     * The settings of log {@code name} for its life in the store ({@link StoreLogConfigs#configOf}), its flushes through
     * the journal, unless the journal is off or the log's own settings ask for no force or for a force of their own.
     */
    private WalConfig journaledConfigOf(String name, Path dir, Consumer<WalConfig.Builder> created) {
        return settings.journaled(name, dir, created, journal, keys.get(name));
    }

    /** {@link #create(String, Consumer)} with the store's defaults. */
    public Wal create(String name) {
        return create(name, b -> { });
    }

    /**
     * Creates log {@code name} and returns it open. {@code settings} change the store's defaults for this log, all of
     * them at its creation (a log id, a base LSN, an archive...); the log keeps the plain ones (numbers, levels,
     * durations) for every later open, while objects such as an archive come from
     * {@link WalStoreConfig.Builder#logSettings} each time. Crash-safe (see the class comment).
     *
     * @throws IllegalArgumentException when the name is not one a log may have
     * @throws IllegalStateException    when the log exists, or the store is closed
     * @throws WalException             on an I/O error (nothing of the log is left)
     */
    public synchronized Wal create(String name, Consumer<WalConfig.Builder> settings) {
        checkName(name);
        ensureOpen();
        Path dir = logs.resolve(name);
        if (open.containsKey(name) || Files.exists(dir)) {
            throw new IllegalStateException("log '" + name + "' exists in the store " + config.directory());
        }
        Path building = logs.resolve(CREATING + name);
        try {
            StoreDirectories.deleteTree(building);
            Files.createDirectories(building);
            StoreLogSettings.write(building, StoreLogSettings.chosen(this.settings::defaultSettings, settings));
            long key = LogKeys.assign(building, keys.values());
            keys.put(name, key);
            // Its files, each forced, not opened here: nothing goes through the journal under the temporary name.
            LogOpener.create(this.settings.withinBudget(this.settings.configOf(name, building, settings).build()));
            SegmentFiles.forceDirectory(building);
            Files.move(building, dir, StandardCopyOption.ATOMIC_MOVE); // the log exists from here on, whole
        } catch (IOException | RuntimeException e) {
            keys.remove(name);
            StoreDirectories.deleteQuietly(building);
            if (e instanceof IOException io) {
                throw new WalException("cannot create log '" + name + "' in " + logs + ": " + e.getMessage(), io);
            }
            throw (RuntimeException) e;
        }
        try {
            SegmentFiles.forceDirectory(logs);
            Wal wal = Wal.open(journaledConfigOf(name, dir, settings), threads, files, budget, false);
            open.put(name, wal);
            LOG.info("Created log {} in the store {}", name, config.directory());
            return wal;
        } catch (IOException | RuntimeException e) {
            // Named but not usable: taken back out (as a deletion would), so that no log is there that the store
            // does not serve; a crash before that leaves it whole, and it opens with the store.
            discard(name, dir);
            forgetKey(name);
            throw e instanceof IOException io
                    ? new WalException("cannot create log '" + name + "' in " + logs + ": " + e.getMessage(), io)
                    : (RuntimeException) e;
        }
    }

    /**
     * Checks that a log created now with {@code settings} would be accepted as {@link #create} checks them (each value,
     * the segment size against the record size, the store's budget of WAL buffers), creating nothing: for a caller that
     * must refuse a bad creation before another process makes it.
     *
     * @throws IllegalSettingException when a setting is refused
     */
    public void checkSettings(Consumer<WalConfig.Builder> settings) {
        WalConfig.Builder b = this.settings.defaultSettings();
        settings.accept(b);
        this.settings.withinBudget(b.build());
    }

    /** Renames a log's directory out of the store and removes it, quietly (a failed creation's cleanup). */
    private void discard(String name, Path dir) {
        StoreDirectories.discard(logs, dir, logs.resolve(DELETING + name));
    }

    /** The log named {@code name}, open; empty when the store has none of that name. */
    public Optional<Wal> log(String name) {
        return Optional.ofNullable(open.get(name));
    }

    /**
     * How many times the store's journal was forced, each a flush shared by the commits of every log that flushed
     * meanwhile (see {@link WalStoreConfig.Builder#sharedJournal}); 0 when the logs force their own files.
     */
    public long sharedFlushCount() {
        StoreJournal j = journal;
        return j == null ? 0 : j.flushCount();
    }

    /**
     * The bytes of WAL buffers the store's logs hold now: those appending, or not idle long enough to give them back. At
     * most {@link WalStoreConfig#walBuffers()} (see {@link WalStoreConfig.Builder#walBuffers}).
     */
    public long walBuffersHeld() {
        return budget.held();
    }

    /** How many times a quiet log gave its WAL buffers back so that another could append: for tests. */
    long walBuffersGivenBack() {
        return budget.givenBack();
    }

    /** How many wakes took their WAL buffers beyond the budget rather than risk a deadlock: for tests. */
    long walBuffersOverdrafts() {
        return budget.overdrafts();
    }

    /** How many appends waited for a busy log to fall quiet and give its WAL buffers back: for tests. */
    long walBuffersWaits() {
        return budget.waits();
    }

    /** How many sealed segments gave back their mappings and descriptors so far (see {@link WalStoreConfig.Builder#maxOpenFiles}): for tests. */
    long parkedSegments() {
        return files.parked();
    }

    /** The bytes the journal holds that no checkpoint removed yet (0 without a journal): for tests. */
    long journalHeldBytes() {
        StoreJournal j = journal;
        return j == null ? 0 : j.heldBytes();
    }

    /** The names of the store's logs, sorted. */
    public Set<String> names() {
        return Collections.unmodifiableSet(new TreeSet<>(open.keySet()));
    }

    /**
     * Closes log {@code name} and removes it with its files. Crash-safe (see the class comment): once this returns, or
     * once a crash after its rename, the log is gone for good.
     *
     * @throws IllegalArgumentException when the name is not one a log may have
     * @throws IllegalStateException    when the store has no such log, or is closed
     */
    public synchronized void delete(String name) {
        checkName(name);
        ensureOpen();
        Wal wal = open.get(name);
        if (wal == null) {
            throw new IllegalStateException("no log '" + name + "' in the store " + config.directory());
        }
        try {
            wal.close();
        } catch (RuntimeException e) {
            // A failed log is one a user may most want gone: its files go all the same (a mapping it still holds stays
            // valid until the process ends; the files' names are gone from the store).
            LOG.warn("Closing log {} before its deletion failed ({}); deleting it anyway", name, e.toString());
        }
        open.remove(name);
        Path doomed = logs.resolve(DELETING + name);
        try {
            Long key = keys.get(name);
            if (journal != null && key != null) {
                journal.forceFilesOf(key); // before the rename: see StoreJournal.forceFilesOf
            }
            StoreDirectories.deleteTree(doomed);
            Files.move(logs.resolve(name), doomed, StandardCopyOption.ATOMIC_MOVE);
            forgetKey(name); // only now: until the rename, the journal's checkpoint still forces its files
        } catch (IOException e) {
            throw new WalException("cannot delete log '" + name + "' in " + logs + ": " + e.getMessage()
                    + " (it is closed, and opens again with the store; delete it then)", e);
        }
        try {
            SegmentFiles.forceDirectory(logs); // gone for good from here on
            StoreDirectories.deleteTree(doomed);
        } catch (IOException e) {
            throw new WalException("log '" + name + "' is deleted, but its files could not all be removed (" + e.getMessage()
                    + "): the rest is removed at the store's next open", e);
        }
        LOG.info("Deleted log {} from the store {}", name, config.directory());
    }

    /**
     * Changes log {@code name}'s own settings and opens it again with them: {@code changes} apply over what the log has
     * now (the store's defaults, then what it was created or last reconfigured with), and are kept as
     * {@link #create(String, Consumer)}'s are. The log is closed first, so flushed: every append it acknowledged stays,
     * and one that races the close fails with {@link WalClosedException}, unwritten. Its settings file is replaced
     * atomically (a crash leaves the old settings or the new, whole), and the log opens again: the {@link Wal} returned
     * replaces the one the caller held, which stays closed. Until then {@link #log} finds the closed one, never nothing
     * (so a server answers "closed, retry", not "no such log"); a log that cannot be opened again even with its old
     * settings stays there closed until the store reopens or the log is deleted. The segment size and the log's
     * identity cannot change (its files hold them): changes to them are ignored, as they are at any open.
     *
     * @throws IllegalArgumentException when the name is not one a log may have
     * @throws IllegalSettingException  when the new settings are refused: the log was not touched
     * @throws IllegalStateException    when the store has no such log, or is closed
     * @throws WalException             when the settings cannot be written or the log not opened again with them (it is
     *                                  then opened with its old settings, when it can be)
     */
    public synchronized Wal reconfigure(String name, Consumer<WalConfig.Builder> changes) {
        return reopen(name, changes, false, wal -> { });
    }

    /**
     * Gives log {@code name} exactly the settings {@code settings} sets, as if it had been created with them (a
     * replica's copy taking its primary's settings): what they leave alone follows the store's defaults again, as
     * {@link #create(String, Consumer)}'s would. When that is what the log has already, nothing is done and the open log
     * is returned; otherwise the log is closed and opened again as {@link #reconfigure} does, and {@code reopened} runs
     * on the reopened log before {@link #log} finds it (a replica's log refuses appends before any can reach it).
     *
     * @throws IllegalArgumentException when the name is not one a log may have
     * @throws IllegalSettingException  when the new settings are refused: the log was not touched
     * @throws IllegalStateException    when the store has no such log, or is closed
     * @throws WalException             as {@link #reconfigure} throws it
     */
    public synchronized Wal replaceSettings(String name, Consumer<WalConfig.Builder> settings, Consumer<Wal> reopened) {
        return reopen(name, settings, true, reopened);
    }

    /** {@link #reconfigure} ({@code replacing} false: over what the log has) or {@link #replaceSettings}. */
    private Wal reopen(String name, Consumer<WalConfig.Builder> changes, boolean replacing, Consumer<Wal> reopened) {
        checkName(name);
        ensureOpen();
        Wal wal = open.get(name);
        if (wal == null) {
            throw new IllegalStateException("no log '" + name + "' in the store " + config.directory());
        }
        Path dir = logs.resolve(name);
        settings.withinBudget(settings.configOf(name, dir, changes).build()); // a refused setting refuses here, the log untouched
        Map<String, String> before = StoreLogSettings.read(dir);
        Map<String, String> after = StoreLogSettings.changed(before, settings::defaultSettings, changes, replacing);
        if (replacing && after.equals(before)) {
            return wal;
        }
        long floor = wal.replicationFloor(); // what its replicas' slots hold: kept by the reopened log from the start
        closeForReopen(name, wal);
        try {
            StoreLogSettings.write(dir, after);
            Wal opened = openAgain(name, dir, floor, reopened);
            LOG.info("Log {} of the store {} reopened with its settings changed: {}", name, config.directory(), after);
            return opened;
        } catch (IOException | RuntimeException e) {
            LOG.warn("Log {} could not be reopened with its new settings ({}); reopening it with its old ones", name,
                    e.toString());
            try {
                StoreLogSettings.write(dir, before);
                openAgain(name, dir, floor, reopened);
            } catch (IOException | RuntimeException again) {
                e.addSuppressed(again);
            }
            throw e instanceof RuntimeException r ? r
                    : new WalException("cannot change the settings of log '" + name + "': " + e.getMessage(), e);
        }
    }

    /** Opens a log closed by {@link #closeForReopen}, readies it with {@code reopened}, and only then offers it. */
    private Wal openAgain(String name, Path dir, long replicationFloor, Consumer<Wal> reopened) {
        Wal wal = Wal.open(journaledConfigOf(name, dir, b -> { }), threads, files, budget, false, replicationFloor);
        try {
            reopened.accept(wal);
        } catch (RuntimeException e) {
            wal.close();
            throw e;
        }
        open.put(name, wal);
        return wal;
    }

    /**
     * Closes a log that opens again at once, leaving it in {@link #open} until its successor takes its place (its
     * journal entries then cover files the checkpoint must still force).
     */
    private void closeForReopen(String name, Wal wal) {
        try {
            wal.close();
        } catch (RuntimeException e) {
            LOG.warn("Closing log {} to reopen it failed ({}); reopening it all the same", name, e.toString());
        }
        Long key = keys.get(name);
        if (journal != null && key != null) {
            try {
                journal.forceFilesOf(key); // what the closed log's segments wrote: its journal entries may now go
            } catch (IOException e) { // the log's journal remembers the failed force: the reopened log fails at its flush
                LOG.warn("Forcing log {}'s files before reopening it failed: {}", name, e.toString());
            }
        }
    }

    /** Closes every log, then the shared threads, then releases the directory. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<RuntimeException> failures = new ArrayList<>();
        for (Wal wal : open.values()) {
            try {
                wal.close();
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        open.clear();
        if (journal != null) {
            try {
                journal.close(); // after the logs: their last flushes went into it
            } catch (RuntimeException e) {
                failures.add(e);
            }
            try {
                journalLog.close();
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        threads.close();
        try {
            lock.release();
            lockChannel.close();
        } catch (IOException e) {
            failures.add(new UncheckedIOException(e));
        }
        if (!failures.isEmpty()) {
            RuntimeException first = failures.get(0);
            failures.subList(1, failures.size()).forEach(first::addSuppressed);
            throw first;
        }
    }

    /**
     * The log's key leaves the store (deleted, or its creation failed): the journal need not force its files, and its
     * entries are skipped at the next open (no directory has the key).
     */
    private void forgetKey(String name) {
        Long key = keys.remove(name);
        if (key != null && journal != null) {
            journal.forget(key);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the store in " + config.directory() + " is closed");
        }
    }

    private static void checkName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("'" + name + "' is not a log name: 1 to 128 of a-z 0-9 . _ -, "
                    + "beginning with a letter or a digit");
        }
    }
}
