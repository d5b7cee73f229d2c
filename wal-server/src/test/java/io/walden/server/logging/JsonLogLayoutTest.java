package io.walden.server.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.io.IOException;

import static org.assertj.core.api.Assertions.assertThat;

class JsonLogLayoutTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final LoggerContext context = new LoggerContext();

    private String layout(String member, String message, Throwable error, Object... args) {
        JsonLogLayout layout = new JsonLogLayout("orders", member);
        layout.setContext(context);
        layout.start();
        LoggingEvent event = new LoggingEvent(getClass().getName(), context.getLogger("io.walden.test"), Level.WARN,
                message, error, args);
        return layout.doLayout(event);
    }

    @Test
    void aMessageWithQuotesAndNewlinesStaysOneLineOfValidJson() throws IOException {
        String line = layout("a", "segment {} is \"torn\"\nat {}", null, 7, "0/40");
        assertThat(line).endsWith("\n");
        assertThat(line.substring(0, line.length() - 1)).doesNotContain("\n");
        JsonNode event = JSON.readTree(line);
        assertThat(event.get("message").asText()).isEqualTo("segment 7 is \"torn\"\nat 0/40");
        assertThat(event.get("level").asText()).isEqualTo("WARN");
        assertThat(event.get("logger").asText()).isEqualTo("io.walden.test");
        assertThat(event.get("log").asText()).isEqualTo("orders");
        assertThat(event.get("member").asText()).isEqualTo("a");
        assertThat(event.get("time").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z");
        assertThat(event.has("error")).isFalse();
    }

    @Test
    void theStackTraceGoesIntoTheErrorField() throws IOException {
        JsonNode event = JSON.readTree(layout("a", "force failed", new IOException("No space left on device")));
        assertThat(event.get("error").asText()).startsWith("java.io.IOException: No space left on device")
                .contains("\tat ");
    }

    @Test
    void aServerWithoutANameHasNoMemberField() throws IOException {
        assertThat(JSON.readTree(layout(null, "started", null)).has("member")).isFalse();
    }
}
