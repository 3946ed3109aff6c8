package dev.atlas.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import com.jayway.jsonpath.JsonPath;
import dev.atlas.loadbalancer.choice.LeastRequestBalancer;
import dev.atlas.loadbalancer.choice.PeakEwmaBalancer;
import dev.atlas.loadbalancer.choice.RingHashBalancer;
import dev.atlas.loadbalancer.choice.SmoothWeightedRoundRobinBalancer;
import dev.atlas.loadbalancer.choice.WeightedRandomBalancer;
import dev.atlas.loadbalancer.choice.WeightedRoundRobinBalancer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration metadata generated from the property classes' field Javadoc (and
 * merged with additional-spring-configuration-metadata.json): what IDEs complete and
 * document.
 */
class ConfigurationMetadataTest {

	/** Every property Atlas had before the configuration was split per concern. */
	private static final List<String> PROPERTIES = List.of("atlas.enabled", "atlas.services",
			"atlas.loadbalancer.strategy", "atlas.loadbalancer.all-zero-weights", "atlas.gray.enabled",
			"atlas.gray.header", "atlas.gray.metadata-key", "atlas.gray.own-tag", "atlas.gray.fallback",
			"atlas.gray.isolate-baseline", "atlas.gray.baseline-tags", "atlas.gray.hash-key-header",
			"atlas.propagation.enabled", "atlas.propagation.headers", "atlas.propagation.reactor-automatic",
			"atlas.affinity.enabled", "atlas.affinity.cluster", "atlas.affinity.min-healthy-ratio",
			"atlas.affinity.min-instances", "atlas.warmup.enabled", "atlas.warmup.duration", "atlas.warmup.aggression",
			"atlas.warmup.min-weight-percent", "atlas.lifecycle.register-when-ready", "atlas.lifecycle.register-delay",
			"atlas.lifecycle.graceful-shutdown", "atlas.lifecycle.drain", "atlas.lifecycle.deregister-timeout",
			"atlas.registry.refresh-on-events", "atlas.registry.stale-limit");

	private static Map<String, Map<String, Object>> properties;

	private static Map<String, Map<String, Object>> hints;

	@BeforeAll
	static void read() throws IOException {
		String json = null;
		for (URL url : Collections.list(ConfigurationMetadataTest.class.getClassLoader()
			.getResources("META-INF/spring-configuration-metadata.json"))) {
			try (InputStream in = url.openStream()) {
				String content = new String(in.readAllBytes(), StandardCharsets.UTF_8);
				if (content.contains("\"atlas.enabled\"")) {
					json = content;
				}
			}
		}
		assertThat(json).as("Atlas's generated metadata").isNotNull();
		List<Map<String, Object>> all = JsonPath.read(json, "$.properties[*]");
		properties = all.stream()
			.collect(Collectors.toMap((property) -> (String) property.get("name"), Function.identity()));
		List<Map<String, Object>> allHints = JsonPath.read(json, "$.hints[*]");
		hints = allHints.stream().collect(Collectors.toMap((hint) -> (String) hint.get("name"), Function.identity()));
	}

	/**
	 * Every property whose type is one of Atlas's enumerations offers exactly its values
	 * in the IDE, each described; the strategy offers every built-in strategy.
	 */
	@Test
	@SuppressWarnings("unchecked")
	void everyEnumLikePropertyHintsEachOfItsValuesWithADescription() throws ClassNotFoundException {
		Map<String, List<String>> expected = new LinkedHashMap<>();
		for (Map<String, Object> property : properties.values()) {
			String type = (String) property.get("type");
			if (type != null && type.startsWith("dev.atlas.")) {
				Class<?> enumType = Class.forName(type);
				if (enumType.isEnum()) {
					expected.put((String) property.get("name"),
							Arrays.stream(enumType.getEnumConstants()).map(Object::toString).toList());
				}
			}
		}
		assertThat(expected).as("enum-typed properties found")
			.containsKeys("atlas.loadbalancer.all-zero-weights", "atlas.gray.fallback", "atlas.affinity.mode",
					"atlas.outlier.probe.type");
		expected.put("atlas.loadbalancer.strategy",
				List.of(WeightedRandomBalancer.NAME, SmoothWeightedRoundRobinBalancer.NAME, LeastRequestBalancer.NAME,
						PeakEwmaBalancer.NAME, RingHashBalancer.NAME, WeightedRoundRobinBalancer.NAME));
		expected.forEach((name, values) -> {
			assertThat(hints).as("hints of %s", name).containsKey(name);
			List<Map<String, Object>> hinted = (List<Map<String, Object>>) hints.get(name).get("values");
			assertThat(hinted).as("hinted values of %s", name)
				.extracting((value) -> value.get("value"))
				.containsExactlyInAnyOrderElementsOf(values);
			assertThat(hinted).allSatisfy((value) -> assertThat((String) value.get("description"))
				.as("description of %s=%s", name, value.get("value"))
				.isNotBlank());
		});
	}

	@Test
	void everyPropertyIsThereAndDocumented() {
		assertThat(properties).containsKeys(PROPERTIES.toArray(String[]::new));
		properties.forEach((name, property) -> assertThat((String) property.get("description")).as(name).isNotBlank());
	}

	@Test
	void theStrategyIsANameWithADefault() {
		assertThat(properties.get("atlas.loadbalancer.strategy")).containsEntry("type", "java.lang.String")
			.containsEntry("defaultValue", "weighted-random");
	}

	@Test
	void perServiceCanaryWeightsLiveUnderAtlasServicesOnly() {
		assertThat(properties).as("no alias of atlas.services.<service-id>.gray.weights.<tag>")
			.doesNotContainKey("atlas.gray.weights")
			.containsKey("atlas.services");
		assertThat(properties.values()).noneMatch((property) -> property.containsKey("deprecation"));
	}

}
