package io.walden.core.archive;

import io.walden.core.internal.archive.Checksums;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.core.sync.ResponseTransformer;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.DeleteObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * An archive in an S3 bucket or an S3-compatible store ({@code s3://bucket/prefix}), through the AWS SDK v2 with its
 * default chains for credentials and region. With an endpoint override (an S3-compatible store) requests are
 * path-style, and the region defaults to {@code us-east-1} when the chain names none.
 *
 * <p>A put sends {@code Content-MD5} (the store refuses a body that arrives damaged), then reads the object's
 * metadata back: its length must match, and its ETag must be the local MD5. Where the ETag is anything else (SSE-KMS
 * and SSE-C buckets, multipart uploads), the object is downloaded and its CRC-32C compared instead. The CRC-32C also travels
 * as user metadata ({@code walden-crc32c}) for people inspecting the bucket.
 *
 * <p>The SDK's own flexible checksums are asked for only when an operation requires them: S3-compatible stores
 * differ in which trailing-checksum encodings they accept, and the MD5 check above covers the same ground.
 *
 * <p>A store that accepts a connection and never answers, or stops reading an upload, costs a call a known time,
 * not the archiver's thread (whose turns also apply the cap on pending bytes and let blocked appends in again): a
 * connect is given up after {@link #CONNECT_TIMEOUT}, a response that stays silent after {@link Limits#read()}, and
 * an upload attempt after {@link Limits#uploadAttempt(long)} (its size at the slowest rate we still accept, plus a
 * margin): a socket write has no timeout in {@code HttpURLConnection}, so the SDK's attempt timeout aborts the
 * connection instead. The SDK tries a call a few times (its default retry policy), and the archiver's turns wait for
 * it meanwhile ({@link Limits#DEFAULT} says how long that can be). A store that refuses connections fails each try at
 * once.
 *
 * <p>Thread-safety: safe for concurrent use (the SDK client is).
 */
public final class S3ArchiveTarget implements ArchiveTarget {
    /** A TCP connect: enough for one lost SYN (resent after 1 s) on any route to a store. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);

    /**
     * How long a call may stay silent or an upload may take.
     *
     * @param read                      the longest silence while a response is read, a get's body included (so a
     *                                  download of any size is bounded by its progress, not its size)
     * @param uploadMargin              what an upload attempt may take beyond moving its bytes at the slowest rate
     * @param slowestUploadBytesPerSecond the slowest upload that still completes
     */
    record Limits(Duration read, Duration uploadMargin, long slowestUploadBytesPerSecond) {
        /**
         * 30 s of silence (the SDK's own default, fixed here so that it stays a decision of ours); an upload attempt
         * at 2 Mbit/s plus 30 s, so a 64 MiB segment may take 286 s a try (and the SDK, in the version we ship, tries
         * up to four times: 19 minutes for a store that takes the body's head and then stops reading, during which the
         * archiver's turns wait). An attempt is bounded by its size, not a fixed time, because a fixed time short
         * enough to matter would fail every large segment on a slow link, forever (each try killed at the same point).
         */
        static final Limits DEFAULT = new Limits(Duration.ofSeconds(30), Duration.ofSeconds(30), 256 << 10);

        Limits {
            if (read.isNegative() || uploadMargin.isNegative() || slowestUploadBytesPerSecond <= 0) {
                throw new IllegalArgumentException("S3 call limits: times not negative, a rate above zero, not "
                        + read + ", " + uploadMargin + ", " + slowestUploadBytesPerSecond + " B/s");
            }
        }

        /** How long one attempt to upload {@code length} bytes may take (the SDK aborts it then, and tries again). */
        Duration uploadAttempt(long length) {
            return uploadMargin.plusMillis(length * 1000 / slowestUploadBytesPerSecond);
        }
    }

    private final S3Client s3;
    private final String bucket;
    private final String prefix;
    private final String uri;
    /** Whether this target made {@link #s3} and so closes it (false for one reached through {@link #under}). */
    private final boolean ownsClient;
    private final Limits limits;

    /**
     * @param uri      {@code s3://bucket} or {@code s3://bucket/prefix}
     * @param endpoint an S3-compatible store's endpoint ({@code http://host:port}), or null for AWS itself
     */
    public S3ArchiveTarget(URI uri, URI endpoint) {
        this(uri, endpoint, Limits.DEFAULT);
    }

    /** As {@link #S3ArchiveTarget(URI, URI)}, with other bounds on a call's time (tests). */
    S3ArchiveTarget(URI uri, URI endpoint, Limits limits) {
        if (!"s3".equals(uri.getScheme()) || uri.getHost() == null || uri.getHost().isEmpty()) {
            throw new IllegalArgumentException("an S3 archive is s3://bucket[/prefix], not " + uri);
        }
        this.uri = uri.toString();
        this.bucket = uri.getHost();
        String path = uri.getPath() == null ? "" : uri.getPath();
        while (path.startsWith("/")) {
            path = path.substring(1);
        }
        this.prefix = path.isEmpty() || path.endsWith("/") ? path : path + "/";
        S3ClientBuilder b = S3Client.builder()
                .httpClientBuilder(UrlConnectionHttpClient.builder().connectionTimeout(CONNECT_TIMEOUT)
                        .socketTimeout(limits.read()))
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        if (endpoint != null) {
            b.endpointOverride(endpoint).forcePathStyle(true).region(regionOr(Region.US_EAST_1));
        } else {
            b.region(regionOr(null));
        }
        try {
            this.s3 = b.build();
        } catch (SdkException e) {
            throw new IllegalArgumentException("cannot reach the archive " + uri + ": " + e.getMessage(), e);
        }
        this.ownsClient = true;
        this.limits = limits;
    }

    /** A target under {@code parent}'s prefix, on its client. */
    private S3ArchiveTarget(S3ArchiveTarget parent, String sub) {
        this.s3 = parent.s3;
        this.bucket = parent.bucket;
        this.prefix = parent.prefix + sub;
        this.uri = "s3://" + bucket + "/" + prefix;
        this.ownsClient = false;
        this.limits = parent.limits;
    }

    private static Region regionOr(Region fallback) {
        try {
            return new DefaultAwsRegionProviderChain().getRegion();
        } catch (SdkException e) {
            if (fallback != null) {
                return fallback;
            }
            throw new IllegalArgumentException("no AWS region is configured for the S3 archive (set AWS_REGION, "
                    + "-Daws.region or a profile): " + e.getMessage(), e);
        }
    }

    @Override
    public String uri() {
        return uri;
    }

    @Override
    public void put(String name, Path file, long length) throws IOException {
        Checksums.Sums local = Checksums.of(file, length);
        String key = prefix + name;
        try {
            s3.putObject(PutObjectRequest.builder().bucket(bucket).key(key).contentLength(length)
                            .contentMD5(Base64.getEncoder().encodeToString(local.md5()))
                            .metadata(Map.of("walden-crc32c", Long.toHexString(local.crc32c())))
                            .overrideConfiguration(o -> o.apiCallAttemptTimeout(limits.uploadAttempt(length)))
                            .build(),
                    RequestBody.fromContentProvider(() -> openRange(file, length), length, "application/octet-stream"));
            HeadObjectResponse head = s3.headObject(HeadObjectRequest.builder().bucket(bucket).key(key).build());
            if (head.contentLength() == null || head.contentLength() != length) {
                throw new IOException("archived object " + key + " holds " + head.contentLength() + " bytes, not " + length);
            }
            String etag = head.eTag() == null ? "" : head.eTag().replace("\"", "");
            if (etag.equalsIgnoreCase(local.md5Hex())) {
                return; // the store received exactly these bytes (it checked Content-MD5 too)
            }
            // Not the MD5 (SSE-KMS, SSE-C and multipart ETags are not): read the object back and compare.
            Path copy = Files.createTempFile("walden-verify", ".tmp");
            try {
                get(name, copy);
                long stored = Checksums.of(copy, length).crc32c();
                if (Files.size(copy) != length || stored != local.crc32c()) {
                    throw new IOException("archived object " + key + " does not verify: CRC-32C " + Long.toHexString(stored)
                            + " read back, " + Long.toHexString(local.crc32c()) + " local");
                }
            } finally {
                Files.deleteIfExists(copy);
            }
        } catch (SdkException e) {
            throw new IOException("could not archive " + name + " to " + uri + ": " + e.getMessage(), e);
        }
    }

    private static InputStream openRange(Path file, long length) {
        try {
            FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
            InputStream in = Channels.newInputStream(ch);
            return new FilterInputStream(in) {
                private long left = length;

                @Override
                public int read() throws IOException {
                    if (left <= 0) {
                        return -1;
                    }
                    int b = super.read();
                    if (b >= 0) {
                        left--;
                    }
                    return b;
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    if (left <= 0) {
                        return -1;
                    }
                    int n = super.read(b, off, (int) Math.min(len, left));
                    if (n > 0) {
                        left -= n;
                    }
                    return n;
                }
            };
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public boolean get(String name, Path dest) throws IOException {
        try {
            Files.deleteIfExists(dest);
            s3.getObject(GetObjectRequest.builder().bucket(bucket).key(prefix + name).build(), ResponseTransformer.toFile(dest));
            return true;
        } catch (NoSuchKeyException e) {
            return false;
        } catch (S3Exception e) {
            if (e.statusCode() == 404) {
                return false;
            }
            throw new IOException("could not fetch " + name + " from " + uri + ": " + e.getMessage(), e);
        } catch (SdkException e) {
            throw new IOException("could not fetch " + name + " from " + uri + ": " + e.getMessage(), e);
        }
    }

    @Override
    public List<StoredObject> list() throws IOException {
        List<StoredObject> out = new ArrayList<>();
        try {
            // The delimiter leaves out what lies under a deeper prefix (another log's archive: see under()).
            for (S3Object o : s3.listObjectsV2Paginator(ListObjectsV2Request.builder().bucket(bucket).prefix(prefix)
                    .delimiter("/").build()).contents()) {
                String name = o.key().substring(prefix.length());
                if (!name.isEmpty() && name.indexOf('/') < 0) {
                    out.add(new StoredObject(name, o.size()));
                }
            }
        } catch (SdkException e) {
            throw new IOException("could not list " + uri + ": " + e.getMessage(), e);
        }
        return out;
    }

    @Override
    public ArchiveTarget under(String sub) {
        return new S3ArchiveTarget(this, ArchiveTarget.checkPrefix(sub));
    }

    @Override
    public List<String> prefixes() throws IOException {
        List<String> out = new ArrayList<>();
        try {
            for (CommonPrefix p : s3.listObjectsV2Paginator(ListObjectsV2Request.builder().bucket(bucket).prefix(prefix)
                    .delimiter("/").build()).commonPrefixes()) {
                String name = p.prefix().substring(prefix.length());
                out.add(name.substring(0, name.length() - 1));
            }
        } catch (SdkException e) {
            throw new IOException("could not list " + uri + ": " + e.getMessage(), e);
        }
        Collections.sort(out);
        return out;
    }

    @Override
    public void delete(String name) throws IOException {
        try {
            s3.deleteObject(DeleteObjectRequest.builder().bucket(bucket).key(prefix + name).build());
        } catch (SdkException e) {
            throw new IOException("could not delete " + name + " from " + uri + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        if (ownsClient) {
            s3.close();
        }
    }

    @Override
    public String toString() {
        return uri;
    }
}
