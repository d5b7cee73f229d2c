package io.walden.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.walden.server.auth.Grant;

import java.util.ArrayDeque;

/**
 * One HTTP connection: reads requests as they arrive (HTTP/1.1 pipelining: many may be in flight) and writes their
 * answers strictly in the order the requests came, whatever order the answers are ready in (an append waits for its
 * flush, a read for a reader thread). Answers ready together are written together and flushed once: at the end of a
 * batch of reads, or at once when an answer arrives between batches.
 *
 * <p>Which requests run at once: each request sees the effects of every request before it on its connection, as if
 * they ran one by one. So appends run as soon as they arrive while only appends are before them (the log keeps their
 * order: their LSNs follow the requests'), {@code /health}-like requests that touch no data run at once, and anything
 * else (a read, an admin call, a stream) waits until every request before it was answered; whatever comes after a
 * waiting request waits too, in order (RFC 9112 allows a server to process pipelined requests in parallel only
 * where that cannot change their outcome).
 *
 * <p>Bounds: at most {@link #MAX_IN_FLIGHT} requests per connection run at once, and once that many are unanswered the
 * connection stops reading until half of them are answered (so a pipelining client cannot make the server hold
 * unbounded bodies: what one read already brought in waits, decoded, for its turn).
 * A streaming answer ({@code /v1/records/stream}) starts only once every request before it was answered, owns the
 * connection from then on (requests sent after it are dropped), and closes it when it ends. An answer with
 * {@code Connection: close}, a refused request and a malformed one close the connection after their answer, and so
 * does a client's half-close after the last answer it asked for (a stream then ends with its last chunk).
 *
 * <p>Exchanges are recycled: one is reused once its answer was written, so the hot paths allocate none.
 *
 * <p>Thread-safety: one instance per channel; everything runs on the channel's event loop except {@link #execute},
 * {@link #inEventLoop} and {@link #finishStream}, which may be called from any thread.
 */
final class HttpConnection extends ChannelInboundHandlerAdapter {
    static final int MAX_IN_FLIGHT = 64;
    private static final int POOL = 16;

    private final HttpRouter router;
    private final ArrayDeque<Exchange> inOrder = new ArrayDeque<>();
    /** Requests received but not started yet (see the class comment), in order: always the tail of {@link #inOrder}. */
    private final ArrayDeque<Exchange> waiting = new ArrayDeque<>();
    private final ArrayDeque<Exchange> free = new ArrayDeque<>();
    /** Started requests not answered yet: all of them, and those that are not appends. */
    private int running;
    private int runningOthers;
    /** Set while {@link #writeReady} runs: an answer that arrives meanwhile (a request it started answered at once) waits for its next pass. */
    private boolean writing;
    private boolean writeAgain;
    private ChannelHandlerContext ctx;
    /** The context writes of pre-encoded answers start from: it skips the response encoder. */
    private ChannelHandlerContext encodedCtx;
    private boolean inReadBatch;
    private boolean writtenUnflushed;
    private boolean closed;
    /** A stream or a closing answer took the connection over: requests after it are dropped. */
    private boolean takenOver;
    /**
     * The grant the gate sent ahead of the next request ({@link RequestGate}); {@link Grant#ALL} when no token is
     * configured (the gate sends none), and again after each request took its own.
     */
    private Grant nextGrant = Grant.ALL;

    HttpConnection(HttpRouter router) {
        this.router = router;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.encodedCtx = ctx.pipeline().context(HttpResponseEncoder.class);
    }

    ChannelHandlerContext ctx() {
        return ctx;
    }

    boolean inEventLoop() {
        return ctx.executor().inEventLoop();
    }

    void execute(Runnable task) {
        ctx.executor().execute(task);
    }

    String redact(String message) {
        return router.redact(message);
    }

    Access access() {
        return router.access();
    }

    // ------------------------------------------------------------------ requests

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        inReadBatch = true;
        if (msg instanceof Grant grant) {
            nextGrant = grant;
            return;
        }
        if (closed || takenOver) {
            // After a stream, a refusal or Connection: close nothing more is answered.
            ReferenceCountUtil.release(msg instanceof RequestGate.Refusal refusal ? refusal.request() : msg);
            return;
        }
        if (msg instanceof RequestGate.Refusal refusal) {
            nextGrant = Grant.NONE; // no handler runs: the refusal is its answer
            Exchange ex = start(refusal.request());
            ex.closeAfterAnswer(); // its body was not read: nothing after it on this connection can be parsed
            takenOver = true;
            ex.error(refusal.status(), refusal.error(), refusal.detail(), refusal.challenge());
            return;
        }
        if (!(msg instanceof FullHttpRequest request)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        Exchange ex = start(request);
        if (!request.decoderResult().isSuccess()) {
            ex.closeAfterAnswer();
            takenOver = true;
            ex.error(HttpResponseStatus.BAD_REQUEST, "bad_request", "malformed HTTP request: " + request.decoderResult().cause());
            return;
        }
        if (!ex.keepAlive()) {
            takenOver = true; // Connection: close: this is the last request the connection answers
        }
        router.route(ex);
        if (ex.kind() == Route.Kind.STREAM) {
            takenOver = true;
            ex.closeAfterAnswer(); // a stream, or the error that refuses it, is the connection's last answer
        }
        if (!waiting.isEmpty() || !canStart(ex)) {
            waiting.add(ex);
            return;
        }
        run(ex);
    }

    /** Whether {@code ex} may start now, given the requests before it that are still running (class comment). */
    private boolean canStart(Exchange ex) {
        if (running >= MAX_IN_FLIGHT) {
            return false;
        }
        switch (ex.kind()) {
            case FREE:
                return true;
            case APPEND:
                return runningOthers == 0;
            default:
                return inOrder.peek() == ex; // every request before it was answered and written
        }
    }

    private void run(Exchange ex) {
        running++;
        if (ex.kind() != Route.Kind.APPEND) {
            runningOthers++;
        }
        ex.started();
        router.dispatch(ex);
    }

    private Exchange start(FullHttpRequest request) {
        Exchange ex = free.poll();
        if (ex == null) {
            ex = new Exchange(this);
        }
        ex.begin(request, nextGrant);
        nextGrant = Grant.ALL;
        inOrder.add(ex);
        router.started();
        if (inOrder.size() >= MAX_IN_FLIGHT) {
            ctx.channel().config().setAutoRead(false); // resumed once half of them are answered
        }
        return ex;
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        inReadBatch = false;
        if (writtenUnflushed) {
            writtenUnflushed = false;
            ctx.flush();
        }
        ctx.fireChannelReadComplete();
    }

    // ------------------------------------------------------------------ answers

    /** An exchange has its answer (event loop): writes every answer that is now next in line. */
    void answered(Exchange ex, Object response) {
        if (closed || ex.isFinished() || !ex.setAnswer(response)) {
            ReferenceCountUtil.release(response); // the connection is gone, or the exchange was answered already
            return;
        }
        if (ex.isStarted()) {
            running--;
            if (ex.kind() != Route.Kind.APPEND) {
                runningOthers--;
            }
        }
        if (writing) {
            writeAgain = true;
            return;
        }
        writing = true;
        try {
            do {
                writeAgain = false;
                writeReady();
                startWaiting();
            } while (writeAgain && !closed);
        } finally {
            writing = false;
        }
    }

    /** Starts the waiting requests that may start now, in order, up to the first that may not. */
    private void startWaiting() {
        for (Exchange next; !closed && (next = waiting.peek()) != null && canStart(next); ) {
            waiting.poll();
            run(next);
        }
    }

    private void writeReady() {
        boolean wrote = false;
        for (Exchange head; (head = inOrder.peek()) != null; ) {
            if (head.isStreaming() || !head.hasAnswer()) {
                break;
            }
            inOrder.poll();
            Object response = head.takeAnswer();
            if (response instanceof ByteBuf encoded) {
                encodedCtx.write(encoded, ctx.voidPromise());
            } else {
                ((HttpResponse) response).headers().set(
                        HttpHeaderNames.CONNECTION, head.keepAlive()
                                ? HttpHeaderValues.KEEP_ALIVE
                                : HttpHeaderValues.CLOSE);
                ctx.write(response, ctx.voidPromise());
            }
            wrote = true;
            boolean keepAlive = head.keepAlive();
            recycle(head);
            if (!keepAlive) {
                LingeringClose.after(ctx.writeAndFlush(Unpooled.EMPTY_BUFFER)); // unread bytes must not reset the answer
                closeQuietly();
                return;
            }
        }
        if (wrote) {
            if (inReadBatch) {
                writtenUnflushed = true; // flushed once at the end of the batch
            } else {
                ctx.flush();
            }
        }
        if (!ctx.channel().config().isAutoRead() && inOrder.size() <= MAX_IN_FLIGHT / 2) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    /** An append that waits off the event loop holds back every later request, as a non-append does. */
    void holdBehind(Exchange ex) {
        if (ex.kind() == Route.Kind.APPEND && ex.isStarted()) {
            ex.kind(Route.Kind.OTHER);
            runningOthers++;
        }
    }

    private void recycle(Exchange ex) {
        ex.finished();
        ex.releaseRequest();
        router.finished();
        if (free.size() < POOL) {
            free.add(ex);
        }
    }

    /** A stream ended (any thread): its exchange is done, and the connection closes. */
    void finishStream(Exchange ex) {
        if (!inEventLoop()) {
            execute(() -> finishStream(ex));
            return;
        }
        ex.finished();
        if (inOrder.remove(ex)) {
            ex.releaseRequest();
            router.finished();
        }
        ctx.close();
    }

    // ------------------------------------------------------------------ the connection's end

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        closeQuietly();
        super.channelInactive(ctx);
    }

    /** No more answers: every exchange still queued is dropped (an append in flight is told later and ignored). */
    private void closeQuietly() {
        if (closed) {
            return;
        }
        closed = true;
        for (Exchange ex; (ex = inOrder.poll()) != null; ) {
            ex.finished();
            ReferenceCountUtil.release(ex.takeAnswer());
            ex.releaseRequest();
            router.finished();
        }
        waiting.clear();
        free.clear();
    }

    /**
     * The client shut its side (a half-close): it sends nothing more, so the connection answers what it asked and then
     * closes. A stream ends cleanly with its last chunk, since "until the client goes" has come.
     */
    private void inputEnded() {
        takenOver = true;
        Exchange last = inOrder.peekLast();
        if (last == null) {
            ctx.close();
            return;
        }
        last.closeAfterAnswer();
        last.endStream();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof ChannelInputShutdownEvent) {
            inputEnded();
            ctx.fireUserEventTriggered(evt);
        } else if (evt instanceof IdleStateEvent) {
            Exchange head = inOrder.peek();
            if (head == null || !head.isStreaming()) {
                ctx.close(); // an idle or stalled client does not keep a connection forever (a stream may be quiet)
            }
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        router.connectionError(ctx, cause);
        ctx.close();
    }
}
