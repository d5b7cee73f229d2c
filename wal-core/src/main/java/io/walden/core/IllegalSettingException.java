package io.walden.core;

/**
 * A setting of {@link WalConfig.Builder} (or of the {@link io.walden.core.archive.ArchiveConfig} it holds) that the log
 * cannot use, refused when the config is built. {@link #setting()} names it as the builder's method does
 * ({@code segmentSize}; {@code archive.maxPendingBytes} for the archive's), {@link #requirement()} says what it must be
 * in words that name other settings the same way: an application that takes the value from its own users (the server's
 * flags and YAML keys) can say it in their names from these two, without reading the message.
 *
 * <p>Thread-safety: immutable.
 */
public final class IllegalSettingException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String setting;
    private final String requirement;

    /**
     * @param setting     the builder's name of the setting
     * @param requirement what it must be ("must be a power of two from 64 KiB to 1 GiB")
     * @param given       the value it was given, for the message
     */
    public IllegalSettingException(String setting, String requirement, Object given) {
        super(setting + " " + requirement + ", got " + given);
        this.setting = setting;
        this.requirement = requirement;
    }

    /** The setting, named as {@link WalConfig.Builder}'s method that sets it. */
    public String setting() {
        return setting;
    }

    /** What the setting must be (without its name or the value given). */
    public String requirement() {
        return requirement;
    }
}
