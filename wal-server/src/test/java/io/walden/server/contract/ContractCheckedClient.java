package io.walden.server.contract;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * An {@link HttpClient} that holds every response it receives whole (a String or byte[] body) to the OpenAPI document
 * ({@link ApiContract}) before handing it back, so the HTTP tests check the document as a side effect of using the
 * server. Bodies handled otherwise (a stream read line by line, a discarded body) are held to their status and media
 * type only.
 */
public final class ContractCheckedClient extends HttpClient {
    private final HttpClient delegate;

    private ContractCheckedClient(HttpClient delegate) {
        this.delegate = delegate;
    }

    public static HttpClient wrap(HttpClient delegate) {
        return new ContractCheckedClient(delegate);
    }

    public static HttpClient create() {
        return wrap(HttpClient.newHttpClient());
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        return checked(delegate.send(request, handler));
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        return delegate.sendAsync(request, handler).thenApply(ContractCheckedClient::checked);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
                                                            HttpResponse.PushPromiseHandler<T> push) {
        return delegate.sendAsync(request, handler, push).thenApply(ContractCheckedClient::checked);
    }

    private static <T> HttpResponse<T> checked(HttpResponse<T> response) {
        Object body = response.body();
        byte[] bytes = body instanceof String s ? s.getBytes(StandardCharsets.UTF_8)
                : body instanceof byte[] b ? b : null;
        ApiContract.get().check(response.request().method(), response.uri().getRawPath(), response.statusCode(),
                response.headers().firstValue("Content-Type").orElse(null), bytes);
        return response;
    }

    @Override
    public Optional<CookieHandler> cookieHandler() {
        return delegate.cookieHandler();
    }

    @Override
    public Optional<Duration> connectTimeout() {
        return delegate.connectTimeout();
    }

    @Override
    public Redirect followRedirects() {
        return delegate.followRedirects();
    }

    @Override
    public Optional<ProxySelector> proxy() {
        return delegate.proxy();
    }

    @Override
    public SSLContext sslContext() {
        return delegate.sslContext();
    }

    @Override
    public SSLParameters sslParameters() {
        return delegate.sslParameters();
    }

    @Override
    public Optional<Authenticator> authenticator() {
        return delegate.authenticator();
    }

    @Override
    public Version version() {
        return delegate.version();
    }

    @Override
    public Optional<Executor> executor() {
        return delegate.executor();
    }
}
