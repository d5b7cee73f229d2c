/**
 * The archiver's moving parts behind {@link io.walden.core.archive.Archiver}: the uploader thread, its progress
 * file, checksums, the cap on bytes waiting, and the status it reports. Internal to Walden; object names and the
 * status directory are specified in docs/format.md ("Archive").
 */
package io.walden.core.internal.archive;
