package io.walden.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpUtil;

/**
 * How a batch body frames its records (docs/http-api.md, "POST /v1/records/batch"): each a 4-byte length then the
 * payload, all of the batch's {@code type}; or, with {@code Content-Type: application/vnd.walden.frames}, the frames
 * binary reads answer with ({@link RecordFrames}: LSN, type, length, payload), each record with its own type and the
 * LSN ignored, so that frames read from one log can be posted to another as they are.
 */
enum BatchFraming {
    LENGTH_PREFIXED(4, 0, -1),
    FRAMES(RecordFrames.HEADER_BYTES, 10, 8);

    /** The batch's Content-Type for frames: not application/octet-stream, which length-prefixed batches have always been sent as. */
    static final String FRAMES_MEDIA_TYPE = "application/vnd.walden.frames";
    /** Walden's own media types: one of them this endpoint does not know is a mistake, never length-prefixed records. */
    private static final String VENDOR_TREE = "application/vnd.walden.";

    private final int headerBytes;
    private final int lengthOffset;
    /** Where a record's own type is, or -1 when the batch's type applies to all. */
    private final int typeOffset;

    BatchFraming(int headerBytes, int lengthOffset, int typeOffset) {
        this.headerBytes = headerBytes;
        this.lengthOffset = lengthOffset;
        this.typeOffset = typeOffset;
    }

    /**
     * The framing the request's {@code Content-Type} names: its media type (type/subtype, before any parameter, in any
     * letter case; RFC 9110, 8.3.1) is {@link #FRAMES_MEDIA_TYPE} exactly for frames; any other type, or none, means
     * length-prefixed records (what {@code curl --data-binary} and generated clients send). Null for another of
     * Walden's own types ({@code application/vnd.walden.framesXYZ}): a misspelt frames type must not be read as
     * length-prefixed records.
     */
    static BatchFraming of(Exchange ex) {
        String contentType = ex.request().headers().get(HttpHeaderNames.CONTENT_TYPE);
        CharSequence mediaType = contentType == null ? null : HttpUtil.getMimeType(contentType);
        String type = mediaType == null ? "" : mediaType.toString().trim();
        if (type.equalsIgnoreCase(FRAMES_MEDIA_TYPE)) {
            return FRAMES;
        }
        return type.regionMatches(true, 0, VENDOR_TREE, 0, VENDOR_TREE.length()) ? null : LENGTH_PREFIXED;
    }

    int headerBytes() {
        return headerBytes;
    }

    /**
     * Whether the frame at {@code at} is a stream's error frame ({@link RecordFrames#ERROR_LSN}): a stream's frames are
     * posted as they are, and its error must not become a record.
     */
    boolean isErrorFrame(ByteBuf body, int at) {
        return this == FRAMES && body.getLong(at) == RecordFrames.ERROR_LSN;
    }

    /** The payload length the record at {@code at} declares (unchecked: see countBatch). */
    long declaredLength(ByteBuf body, int at) {
        return body.getUnsignedInt(at + lengthOffset);
    }

    /** The length of a record already validated. */
    int length(ByteBuf body, int at) {
        return (int) body.getUnsignedInt(at + lengthOffset);
    }

    /** The type of the record at {@code at}: its own in a frame, else {@code batchType}. */
    int type(ByteBuf body, int at, int batchType) {
        return typeOffset < 0 ? batchType : body.getUnsignedShort(at + typeOffset);
    }
}
