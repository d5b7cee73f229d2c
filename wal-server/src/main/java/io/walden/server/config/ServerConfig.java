package io.walden.server.config;

import io.walden.core.IllegalSettingException;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalStore;
import io.walden.core.archive.ArchiveConfig;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

import static io.walden.server.config.ServerSettings.DATA_DIR;
import static io.walden.server.config.ServerSettings.HTTP;
import static io.walden.server.config.ServerSettings.NAME;
import static io.walden.server.config.ServerSettings.REPLICATE_FROM;
import static io.walden.server.config.ServerSettings.REPLICATION_LISTEN;

/**
 * The server's settings ({@link ServerSettings}): defaults, overridden by a YAML file, overridden by command-line flags,
 * each read into its type once, at load, so that a bad value stops the server at start with an error naming the
 * setting. Every flag of {@code walden serve} has a YAML key of the same name (without the dashes in front), e.g.
 * <pre>
 * data-dir: /var/lib/walden
 * http: 127.0.0.1:7400
 * durability: on
 * segment-size: 64MiB
 * writer-delay: 200ms
 * </pre>
 * Unknown keys are refused, so that a typo never silently falls back to a default. The sources are read by
 * {@link ConfigSources}, the settings that only make sense together checked by {@link ConfigValidation}.
 *
 * <p>Thread-safety: immutable once built.
 */
public final class ServerConfig {
    public static final String DEFAULT_REPLICATION = "127.0.0.1:7401";
    /** The log at the data directory's root, served on {@code /v1/records} and {@code /v1/logs/default} alike. */
    public static final String DEFAULT_LOG = "default";

    /** Each setting's value by key: absent when neither set nor defaulted (the feature is off). */
    private final Map<String, Object> values;
    /** The text each value was read from and where it was given, for errors and {@link #toString()}. */
    private final Map<String, ConfigSources.Given> given;

    /** The named logs walden.yaml declares, each with its own settings (see {@link PerLogSettings}). */
    private final Map<String, Map<PerLogSettings.Entry, Object>> declaredLogs;

    private ServerConfig(Map<String, Object> values, Map<String, ConfigSources.Given> given,
                         Map<String, Map<PerLogSettings.Entry, Object>> declaredLogs) {
        this.values = values;
        this.given = given;
        this.declaredLogs = declaredLogs;
    }

    /**
     * Builds the configuration.
     *
     * @param yaml  a YAML file, or null
     * @param flags flags given on the command line (key, or an older alias, without dashes, to its text); a null text
     *              is not set
     * @throws IllegalArgumentException naming the setting (and where it was set) that is unknown or wrong, or the YAML
     *                                  file that is missing or malformed
     */
    public static ServerConfig load(Path yaml, Map<String, String> flags) {
        Map<String, ConfigSources.Given> given = ConfigSources.read(yaml, flags);
        Map<String, Object> values = new TreeMap<>();
        for (Setting<?> s : ServerSettings.ALL) {
            ConfigSources.Given g = given.get(s.key());
            if (g != null) {
                values.put(s.key(), s.read(g.text(), g.where()));
            }
        }
        Map<String, Map<PerLogSettings.Entry, Object>> logs = new LinkedHashMap<>();
        ConfigSources.declaredLogs(yaml).forEach((name, texts) -> {
            String where = yaml + ": logs." + name;
            if (name.equals(DEFAULT_LOG) || !WalStore.NAME.matcher(name).matches()) {
                throw new IllegalArgumentException(where + ": " + (name.equals(DEFAULT_LOG)
                        ? "the log 'default' takes the server's settings (set them at the top of the file)"
                        : "not a log name: lower-case letters, digits, '.', '_' and '-', up to 128, from a letter or digit"));
            }
            logs.put(name, Collections.unmodifiableMap(PerLogSettings.read(texts, where, true)));
        });
        ServerConfig c = new ServerConfig(values, new TreeMap<>(given), Collections.unmodifiableMap(logs));
        ConfigValidation.validate(c);
        return c;
    }

    /** The setting's value: given, else its default; null when it has neither (the feature is off). */
    @SuppressWarnings("unchecked")
    public <T> T get(Setting<T> setting) {
        return (T) values.get(setting.key());
    }

    /** The named logs walden.yaml declares under {@code logs:}, in its order, each with its own settings. */
    public Map<String, Map<PerLogSettings.Entry, Object>> declaredLogs() {
        return declaredLogs;
    }

    /** Whether the setting was given or has a default. */
    public boolean isSet(Setting<?> setting) {
        return values.containsKey(setting.key());
    }

    /** The text the setting's value was read from and where it was given, or null when it is unset. */
    ConfigSources.Given given(Setting<?> setting) {
        return given.get(setting.key());
    }

    // ------------------------------------------------------------------ values derived from several settings

    public Path dataDir() {
        return get(DATA_DIR);
    }

    public InetSocketAddress httpAddress() {
        return get(HTTP);
    }

    /**
     * Where this server accepts replicas, or null when it does not: a primary listens on {@code replication-listen}
     * (default 127.0.0.1:7401) unless it is {@code none}; a replica only when it is set (cascading).
     */
    public InetSocketAddress replicationListen() {
        ReplicationListen listen = get(REPLICATION_LISTEN);
        if (listen != null) {
            return listen.address();
        }
        return get(REPLICATE_FROM) == null ? Values.address(DEFAULT_REPLICATION) : null;
    }

    /** The address replicas would be accepted on once this server serves them (a replica's, after a promotion). */
    public InetSocketAddress replicationListenOrDefault() {
        ReplicationListen listen = get(REPLICATION_LISTEN);
        return listen == null ? Values.address(DEFAULT_REPLICATION) : listen.address();
    }

    /** This server's name in its primary's synchronous policy and in a replica group (default: walden-PID). */
    public String name() {
        String n = get(NAME);
        return n != null ? n : "walden-" + ProcessHandle.current().pid();
    }

    /** True when the log directory already holds a log (a replica then keeps its own identity). */
    public boolean hasLog() {
        return Wal.exists(dataDir());
    }

    /** True when the HTTP address is a loopback address (127.0.0.0/8, ::1). */
    public boolean loopbackOnly() {
        return httpAddress().getAddress().isLoopbackAddress();
    }

    /** The coordinator session's timeout asked for, in milliseconds. */
    public int coordinatorSessionTimeoutMillis() {
        return (int) get(ServerSettings.COORDINATOR_SESSION_TIMEOUT).toMillis();
    }

    /**
     * The log's settings. The segment size applies to a new log; when none is given and the directory already
     * holds a log, that log's size is used (it cannot change), so a plain restart never fails on it.
     */
    public WalConfig walConfig() {
        return walConfigBuilder().build();
    }

    /** The log's settings, to be completed (a new replica takes its primary's log id, segment size and base LSN). */
    public WalConfig.Builder walConfigBuilder() {
        return LogConfigs.walConfigBuilder(this);
    }

    /** Sets every named log's defaults, the server's settings (see {@link PerLogSettings}), on {@code b}. */
    public void namedLogDefaults(WalConfig.Builder b) {
        LogConfigs.namedLogDefaults(this, b);
    }

    /**
     * The archive's settings with its target opened (an S3 client), or null when archive-to is not set. The caller
     * hands it to the log, which closes the target.
     */
    public ArchiveConfig archiveConfig() {
        return LogConfigs.archiveConfig(this);
    }

    /**
     * The log's refusal of a setting in this configuration's terms: the flag or the file and key it was given as, and
     * the text given ({@code --segment-size: must be a power of two from 64 KiB to 1 GiB, not 3MiB}).
     */
    public IllegalArgumentException inServerTerms(IllegalSettingException e) {
        return LogConfigs.inServerTerms(e, this);
    }

    /** HOST:PORT (IPv6 hosts in brackets); the host must resolve locally. */
    public static InetSocketAddress parseAddress(String text, String what) {
        try {
            return Values.address(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + ": " + e.getMessage(), e);
        }
    }

    /** The settings as given, secrets hidden, for logs. */
    @Override
    public String toString() {
        Map<String, String> texts = new TreeMap<>();
        given.forEach((key, g) -> texts.put(key, ServerSettings.named(key).secret() ? "***" : g.text()));
        return texts.toString();
    }
}
