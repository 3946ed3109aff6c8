package dev.atlas.loadbalancer.pipeline;

import java.net.URI;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;
import static dev.atlas.loadbalancer.TestInstances.count;
import static dev.atlas.loadbalancer.TestInstances.instance;
import static dev.atlas.loadbalancer.pipeline.TestStages.request;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Metadata that misbehaves (a custom {@code ServiceInstance} whose map throws, or that
 * holds values that are not strings) never breaks a pick: the instance gets the
 * documented defaults (a number under {@code weight} is taken as the weight), one WARN,
 * one count in {@code atlas.metadata.invalid}.
 */
@ExtendWith(OutputCaptureExtension.class)
class HostileMetadataTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	@Test
	void everyPickKeepsWorkingWithTheDocumentedDefaults(CapturedOutput output) {
		List<ServiceInstance> fleet = List.of(instance("P"), new Custom("THROWS", new Throwing()),
				new Custom("NUMBER", raw("weight", 3, "version", "v2")),
				new Custom("OBJECT", raw("weight", new Object(), "version", 7, "zone", new ArrayList<>(List.of("a")))),
				new Custom("NULLS", raw(null, "x", "weight", null, "nacos.weight", 2L)), new Custom("GONE", null) {

					@Override
					public Map<String, String> getMetadata() {
						throw new UnsupportedOperationException("metadata not loaded");
					}

				});
		AtlasLoadBalancer loadBalancer = TestStages.graySmoothRoundRobin(SERVICE, fleet, this.meters);
		List<ServiceInstance> baseline = new ArrayList<>();
		List<ServiceInstance> v2 = new ArrayList<>();
		for (int i = 0; i < 600; i++) {
			baseline.add(Mono.from(loadBalancer.choose(request(null))).block().getServer());
			v2.add(Mono.from(loadBalancer.choose(request("v2"))).block().getServer());
		}
		// Untagged, weight 1 each, but NULLS (nacos.weight 2L): 1 + 1 + 1 + 2 + 1 = 6.
		assertThat(count(baseline)).containsOnly(Map.entry("P", 100), Map.entry("THROWS", 100),
				Map.entry("OBJECT", 100), Map.entry("NULLS", 200), Map.entry("GONE", 100));
		// NUMBER alone is tagged v2 (weight 3).
		assertThat(count(v2)).containsOnly(Map.entry("NUMBER", 600));
		// Three instances with unreadable metadata: THROWS, OBJECT (weight, tag and zone
		// are not strings), GONE; NULLS's null key is never read.
		assertThat(this.meters.counter("atlas.metadata.invalid", "service", SERVICE).count()).isEqualTo(3);
		assertThat(this.meters.counter("atlas.weights.invalid", "service", SERVICE).count()).isZero();
		List<String> warnings = output.getOut().lines().filter((line) -> line.contains("WARN")).toList();
		assertThat(warnings.stream().filter((line) -> line.contains("(THROWS)"))).singleElement()
			.asString()
			.contains("metadata cannot be read")
			.contains("IllegalStateException: boom");
		assertThat(warnings.stream().filter((line) -> line.contains("(OBJECT)"))).singleElement()
			.asString()
			.contains("weight (java.lang.Object)")
			.contains("version (java.lang.Integer)")
			.contains("zone (java.util.ArrayList)");
		assertThat(warnings.stream().filter((line) -> line.contains("(GONE)"))).singleElement()
			.asString()
			.contains("UnsupportedOperationException: metadata not loaded");
		assertThat(warnings.stream().filter((line) -> line.contains("(NUMBER)") || line.contains("(NULLS)"))).isEmpty();
	}

	/** A raw-typed map, as a custom ServiceInstance might build it. */
	@SuppressWarnings({ "unchecked", "rawtypes" })
	private static Map<String, String> raw(Object... keyValues) {
		Map map = new HashMap();
		for (int i = 0; i < keyValues.length; i += 2) {
			map.put(keyValues[i], keyValues[i + 1]);
		}
		return map;
	}

	/** A map whose every read throws. */
	static final class Throwing extends AbstractMap<String, String> {

		@Override
		public Set<Entry<String, String>> entrySet() {
			throw new IllegalStateException("boom");
		}

		@Override
		public String get(Object key) {
			throw new IllegalStateException("boom");
		}

		@Override
		public boolean containsKey(Object key) {
			throw new IllegalStateException("boom");
		}

		@Override
		public boolean isEmpty() {
			throw new IllegalStateException("boom");
		}

		@Override
		public int size() {
			throw new IllegalStateException("boom");
		}

	}

	/** A user-made ServiceInstance. */
	static class Custom implements ServiceInstance {

		private final String id;

		private final Map<String, String> metadata;

		Custom(String id, Map<String, String> metadata) {
			this.id = id;
			this.metadata = metadata;
		}

		@Override
		public String getInstanceId() {
			return this.id;
		}

		@Override
		public String getServiceId() {
			return SERVICE;
		}

		@Override
		public String getHost() {
			return this.id.toLowerCase(Locale.ROOT) + ".local";
		}

		@Override
		public int getPort() {
			return 8080;
		}

		@Override
		public boolean isSecure() {
			return false;
		}

		@Override
		public URI getUri() {
			return URI.create("http://" + getHost() + ":8080");
		}

		@Override
		public Map<String, String> getMetadata() {
			return this.metadata;
		}

	}

}
