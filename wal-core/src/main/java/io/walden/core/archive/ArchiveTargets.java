package io.walden.core.archive;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;

/** Opens an {@link ArchiveTarget} from the URI a user wrote ({@code --archive-to}, {@code --from}). */
public final class ArchiveTargets {
    private ArchiveTargets() {
    }

    /**
     * @param uri      {@code file:///dir} or {@code s3://bucket[/prefix]}
     * @param endpoint for {@code s3://}: an S3-compatible store's endpoint, or null for AWS (the SDK's chains decide)
     * @throws IllegalArgumentException for another scheme, a malformed URI, or s3:// without the AWS SDK on the class path
     */
    public static ArchiveTarget open(String uri, String endpoint) {
        return open(uri, endpoint, true);
    }

    /**
     * {@link #open}, for reading an archive that must exist already (a restore, a replica's catch-up): a directory
     * archive that is missing is refused, and never created.
     */
    public static ArchiveTarget openExisting(String uri, String endpoint) {
        return open(uri, endpoint, false);
    }

    private static ArchiveTarget open(String uri, String endpoint, boolean create) {
        URI u;
        try {
            u = URI.create(uri);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("malformed archive URI '" + uri + "': " + e.getMessage(), e);
        }
        String scheme = u.getScheme() == null ? "" : u.getScheme();
        switch (scheme) {
            case "file":
                if (u.getRawAuthority() != null || u.getPath() == null || !u.getPath().startsWith("/")) {
                    throw new IllegalArgumentException("a directory archive is file:///absolute/dir (three slashes), not '"
                            + uri + "'");
                }
                Path dir = Path.of(u);
                if (!create && !Files.isDirectory(dir)) {
                    throw new IllegalArgumentException("no archive at " + uri + ": " + dir + " is not a directory");
                }
                try {
                    return new FileArchiveTarget(dir);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot use the archive directory " + uri + ": " + e.getMessage(), e);
                }
            case "s3":
                try {
                    return new S3ArchiveTarget(u, endpoint == null || endpoint.isBlank() ? null : URI.create(endpoint));
                } catch (NoClassDefFoundError e) {
                    throw new IllegalArgumentException("s3:// archives need the AWS SDK on the class path "
                            + "(software.amazon.awssdk:s3 and url-connection-client); missing: " + e.getMessage(), e);
                }
            default:
                throw new IllegalArgumentException("an archive URI is s3://bucket[/prefix] or file:///dir, not '" + uri + "'");
        }
    }
}
