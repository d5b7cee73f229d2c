package io.walden.server.http;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.walden.server.auth.Grant;
import io.walden.server.auth.LogGlob;
import io.walden.server.auth.Role;
import io.walden.server.auth.Tokens;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gate hands each request that goes on its token's grant, ahead of it through the aggregator, so that pipelined
 * requests with different tokens on one connection each reach their handler ({@code Exchange.grant()}) with their own;
 * a refused request never reaches the aggregator, and nothing after it does. Through Netty's {@link EmbeddedChannel}.
 */
class RequestGateTest {
    private static final Grant READ = new Grant(Role.READ, List.of());
    private static final Grant APPEND_ORDERS = new Grant(Role.APPEND, List.of(LogGlob.parse("orders*")));

    private final Routes routes = new Routes(List.of(
            new Route(HttpMethod.GET, "/health", Route.Kind.FREE, null, Route.Body.SMALL, null, ex -> { }),
            new Route(HttpMethod.GET, "/v1/records", Route.Kind.OTHER, Role.READ, Route.Body.SMALL, Set.of(), ex -> { }),
            new Route(HttpMethod.POST, "/v1/logs/{name}", Route.Kind.APPEND, Role.APPEND, Route.Body.RECORDS, Set.of(), ex -> { })));
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final Access access = Access.of(new Tokens.Builder().add(Tokens.sha256("reader"), READ, "entry 1")
            .add(Tokens.sha256("orders"), APPEND_ORDERS, "entry 2").build(), registry);
    private final EmbeddedChannel channel = new EmbeddedChannel(new RequestGate(routes, access, 1 << 20),
            new HttpObjectAggregator(1 << 20));

    @AfterEach
    void releaseWhatIsLeft() {
        for (Object m; (m = channel.readInbound()) != null; ) {
            ReferenceCountUtil.release(m);
        }
        channel.finishAndReleaseAll();
    }

    private void send(HttpMethod method, String uri, String token, String body) {
        HttpRequest head = new DefaultHttpRequest(HttpVersion.HTTP_1_1, method, uri);
        head.headers().set(HttpHeaderNames.CONTENT_LENGTH, body.length());
        if (token != null) {
            head.headers().set(HttpHeaderNames.AUTHORIZATION, "Bearer " + token);
        }
        channel.writeInbound(head);
        channel.writeInbound(new DefaultLastHttpContent(Unpooled.copiedBuffer(body, StandardCharsets.UTF_8)));
    }

    /** What came out of the gate and the aggregator, in order: grants, and requests as "METHOD uri". */
    private List<Object> received() {
        List<Object> out = new ArrayList<>();
        for (Object m; (m = channel.readInbound()) != null; ) {
            if (m instanceof FullHttpRequest r) {
                out.add(r.method() + " " + r.uri());
            } else if (m instanceof RequestGate.Refusal r) {
                out.add(r.status().code() + " " + r.error());
                r.request().release();
            } else {
                out.add(m);
            }
            ReferenceCountUtil.release(m);
        }
        return out;
    }

    @Test
    void shouldHandEachPipelinedRequestItsOwnGrantAheadOfIt() {
        send(HttpMethod.GET, "/v1/records", "reader", "");
        send(HttpMethod.POST, "/v1/logs/orders-eu", "orders", "a record");
        send(HttpMethod.GET, "/health", null, "");
        assertThat(received()).containsExactly(READ, "GET /v1/records", APPEND_ORDERS, "POST /v1/logs/orders-eu",
                Grant.NONE, "GET /health");
    }

    @Test
    void shouldRefuseBeforeTheBodyAndPassNothingAfterTheRefusal() {
        send(HttpMethod.GET, "/v1/records", "reader", "");
        send(HttpMethod.POST, "/v1/logs/invoices", "orders", "not its log");
        send(HttpMethod.GET, "/v1/records", "reader", "");
        assertThat(received()).containsExactly(READ, "GET /v1/records", "403 forbidden");
        assertThat(registry.get("walden.http.auth.refusals").tag("reason", "log").counter().count()).isEqualTo(1);
    }

    @Test
    void shouldTellAMissingTokenFromAnUnknownOne() {
        send(HttpMethod.GET, "/v1/records", null, "");
        assertThat(received()).containsExactly("401 unauthorized");
        assertThat(registry.get("walden.http.auth.refusals").tag("reason", "missing").counter().count()).isEqualTo(1);
        assertThat(registry.get("walden.http.auth.refusals").tag("reason", "unknown").counter().count()).isZero();
    }

    @Test
    void shouldReadTheBearerSchemeInAnyCase() {
        assertThat(TokenCheck.tokenStart("Bearer abc")).isEqualTo(7);
        assertThat(TokenCheck.tokenStart("bearer  abc")).isEqualTo(8);
        assertThat(TokenCheck.tokenStart("Basic abc")).isNegative();
        assertThat(TokenCheck.tokenStart("Bearer ")).isNegative();
        assertThat(TokenCheck.tokenStart("Bearerabc")).isNegative();
    }
}
