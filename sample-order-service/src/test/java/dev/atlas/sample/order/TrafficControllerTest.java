package dev.atlas.sample.order;

import java.util.List;
import java.util.Map;

import dev.atlas.sample.order.TrafficService.InstanceShare;
import dev.atlas.sample.order.TrafficService.Traffic;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.web.server.ResponseStatusException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TrafficControllerTest {

	static InstanceShare share(int port, double weight, long count, double expected, double observed) {
		return new InstanceShare("id-" + port, "127.0.0.1", port, "v1", weight, count, expected, observed);
	}

	@Test
	void reportPassesWithinTolerance() {
		Traffic traffic = new Traffic("feign", 3000, 0, null, List.of(share(41001, 1, 495, 1 / 6.0, 0.165),
				share(41002, 2, 1005, 2 / 6.0, 0.335), share(41003, 3, 1500, 0.5, 0.5)));

		String report = TrafficController.render(traffic, 3);

		assertThat(report).isEqualTo("""
				client: feign (3000 calls, 0 failed)
				instance              tag   weight  expected  observed
				127.0.0.1:41001       v1         1    16.7 %    16.5 %
				127.0.0.1:41002       v1         2    33.3 %    33.5 %
				127.0.0.1:41003       v1         3    50.0 %    50.0 %
				RESULT: PASS (max deviation 0.2 points, tolerance 3.0)
				""");
	}

	@Test
	void reportFailsOutsideTolerance() {
		Traffic traffic = new Traffic("rest-template", 3000, 0, null,
				List.of(share(41001, 1, 1500, 0.25, 0.5), share(41002, 3, 1500, 0.75, 0.5)));

		assertThat(TrafficController.render(traffic, 3))
			.endsWith("RESULT: FAIL (max deviation 25.0 points, tolerance 3.0)\n");
	}

	@Test
	void reportFailsOnAnyFailedCall() {
		Traffic traffic = new Traffic("web-client", 10, 1, "java.net.ConnectException: refused",
				List.of(share(41001, 1, 9, 1.0, 1.0)));

		assertThat(TrafficController.render(traffic, 3)).contains("first error: java.net.ConnectException: refused")
			.contains("RESULT: FAIL");
	}

	@Test
	void reportFailsWithoutInstances() {
		assertThat(TrafficController.render(new Traffic("feign", 5, 5, "x", List.of()), 3)).contains("RESULT: FAIL");
	}

	@Test
	void clientNamesAreParsedAndUnknownOnesRejected() {
		assertThat(ClientType.of("web-client")).isEqualTo(ClientType.WEB_CLIENT);
		assertThat(ClientType.of("FEIGN")).isEqualTo(ClientType.FEIGN);
		assertThatThrownBy(() -> ClientType.of("grpc")).isInstanceOf(ResponseStatusException.class)
			.hasMessageContaining("rest-template, rest-client, web-client, feign");
	}

	@Test
	void weightComesFromMetadata() {
		assertThat(TrafficService.weightOf(instance(Map.of("weight", "3")))).isEqualTo(3);
		assertThat(TrafficService.weightOf(instance(Map.of("nacos.weight", "2.5", "weight", "3")))).isEqualTo(2.5);
		assertThat(TrafficService.weightOf(instance(Map.of("weight", "x")))).isEqualTo(1);
		assertThat(TrafficService.weightOf(instance(Map.of("weight", "-2")))).isZero();
		assertThat(TrafficService.weightOf(instance(Map.of()))).isEqualTo(1);
	}

	private static DefaultServiceInstance instance(Map<String, String> metadata) {
		return new DefaultServiceInstance("i", "user-service", "127.0.0.1", 1, false, metadata);
	}

}
