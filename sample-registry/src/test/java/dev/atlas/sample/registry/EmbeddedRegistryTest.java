package dev.atlas.sample.registry;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class EmbeddedRegistryTest {

	@Test
	void startsOnAFreePortAndAnswers() throws Exception {
		int port;
		try (EmbeddedRegistry registry = EmbeddedRegistry.start(0)) {
			port = registry.port();
			assertThat(registry.connectString()).isEqualTo("127.0.0.1:" + port);
			assertThat(ruok(port)).isEqualTo("imok");
		}
		assertThat(EmbeddedRegistry.isFree(port)).isTrue();
	}

	@Test
	void parsesThePort() {
		assertThat(EmbeddedRegistry.parsePort(new String[0])).isEqualTo(2181);
		assertThat(EmbeddedRegistry.parsePort(new String[] { "--port=3000" })).isEqualTo(3000);
		assertThat(EmbeddedRegistry.parsePort(new String[] { "3001" })).isEqualTo(3001);
		assertThatIllegalArgumentException().isThrownBy(() -> EmbeddedRegistry.parsePort(new String[] { "--port=x" }));
		assertThatIllegalArgumentException().isThrownBy(() -> EmbeddedRegistry.parsePort(new String[] { "70000" }));
	}

	private static String ruok(int port) throws Exception {
		try (Socket socket = new Socket("127.0.0.1", port)) {
			OutputStream out = socket.getOutputStream();
			out.write("ruok".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
		}
	}

}
