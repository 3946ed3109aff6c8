package dev.atlas.loadbalancer.instance;

import java.math.BigInteger;
import java.util.HashMap;
import java.util.Map;

import com.alibaba.cloud.nacos.NacosServiceInstance;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

import static dev.atlas.loadbalancer.TestInstances.instance;
import static dev.atlas.loadbalancer.TestInstances.weighted;
import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(OutputCaptureExtension.class)
class InstanceAttributesParserTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final InstanceAttributesParser parser = new InstanceAttributesParser("user-service", "version",
			this.meters);

	@Test
	void nacosWeightIsReadAsFloat() {
		assertThat(this.parser.parse(nacos("a", 1.0, "DEFAULT", true)).weight()).isEqualTo(1.0);
		assertThat(this.parser.parse(nacos("b", 6.0, "DEFAULT", true)).weight()).isEqualTo(6.0);
	}

	@Test
	void plainWeightIsReadAsIntOrFloat() {
		assertThat(this.parser.parse(weighted("a", "6")).weight()).isEqualTo(6.0);
		assertThat(this.parser.parse(weighted("b", " 0.5 ")).weight()).isEqualTo(0.5);
	}

	@Test
	void nacosWeightWinsOverPlainWeight() {
		assertThat(this.parser.parse(instance("a", "nacos.weight", "3.0", "weight", "7")).weight()).isEqualTo(3.0);
		assertThat(this.parser.parse(instance("a", "nacos.weight", " ", "weight", "7")).weight()).isEqualTo(7.0);
	}

	@Test
	void malformedWeightGetsDefaultAndOneWarnPerInstance(CapturedOutput output) {
		ServiceInstance a = weighted("a", "abc");
		for (int refresh = 0; refresh < 3; refresh++) {
			assertThat(this.parser.parse(a).weight()).isEqualTo(1.0);
		}
		assertThat(this.parser.parse(weighted("c", "NaN")).weight()).isEqualTo(1.0);
		assertThat(this.parser.parse(weighted("d", "Infinity")).weight()).isEqualTo(1.0);
		assertThat(this.meters.counter("atlas.weights.invalid", "service", "user-service").count()).isEqualTo(3);
		assertThat(output.getOut().lines().filter((line) -> line.contains("weight='abc'"))).hasSize(1);
		assertThat(output.getOut()).contains("Service 'user-service', instance a.local:8080 (a): metadata weight='abc'"
				+ " is not a finite number; using the default weight 1");
	}

	@Test
	void missingWeightIsOneAndNegativeIsDrainedNotPromoted() {
		assertThat(this.parser.parse(instance("c")).weight()).isEqualTo(1.0);
		InstanceAttributes negative = this.parser.parse(weighted("a", "-3"));
		assertThat(negative.weight()).isZero();
		assertThat(negative.drained()).isTrue();
		assertThat(this.parser.parse(weighted("z", "0")).drained()).isTrue();
		assertThat(this.meters.counter("atlas.weights.invalid", "service", "user-service").count()).isEqualTo(1);
	}

	@Test
	void surroundingBlanksAreTrimmed() {
		assertThat(this.parser.parse(weighted("a", " 2 ")).weight()).isEqualTo(2.0);
		assertThat(this.parser.parse(instance("b", "nacos.weight", "\t6.0\n")).weight()).isEqualTo(6.0);
		InstanceAttributes parsed = this.parser.parse(instance("c", "version", " V2 ", "zone", " SH "));
		assertThat(parsed.tag()).isEqualTo("v2");
		assertThat(parsed.cluster()).isEqualTo("sh");
		assertThat(this.meters.counter("atlas.weights.invalid", "service", "user-service").count()).isZero();
	}

	@Test
	@SuppressWarnings({ "unchecked", "rawtypes" })
	void aNumberUnderWeightIsItsValueAndOtherTypesAreMissing(CapturedOutput output) {
		Map raw = new HashMap();
		raw.put("weight", 3);
		assertThat(this.parser.parse(custom("int", raw)).weight()).isEqualTo(3.0);
		raw = new HashMap();
		raw.put("nacos.weight", 0.5f);
		raw.put("atlas.registered-at", 1_700_000_000_000L);
		InstanceAttributes parsed = this.parser.parse(custom("float", raw));
		assertThat(parsed.weight()).isEqualTo(0.5);
		assertThat(parsed.registeredAtMillis()).isEqualTo(1_700_000_000_000L);
		// An invalid number is an invalid weight, as the same text would be.
		raw = new HashMap();
		raw.put("weight", Double.NaN);
		assertThat(this.parser.parse(custom("nan", raw)).weight()).isEqualTo(1.0);
		raw = new HashMap();
		raw.put("weight", -2);
		assertThat(this.parser.parse(custom("negative", raw)).weight()).isZero();
		assertThat(this.meters.counter("atlas.weights.invalid", "service", "user-service").count()).isEqualTo(2);
		// Another type counts as missing: the next key is read.
		raw = new HashMap();
		raw.put("nacos.weight", new StringBuilder("9"));
		raw.put("weight", "4");
		raw.put("nacos.healthy", Boolean.FALSE);
		for (int refresh = 0; refresh < 3; refresh++) {
			parsed = this.parser.parse(custom("typed", raw));
			assertThat(parsed.weight()).isEqualTo(4.0);
			assertThat(parsed.healthy()).isTrue();
		}
		assertThat(this.meters.counter("atlas.metadata.invalid", "service", "user-service").count()).isEqualTo(1);
		assertThat(output.getOut().lines().filter((line) -> line.contains("(typed)"))).singleElement()
			.asString()
			.contains("nacos.healthy (java.lang.Boolean)")
			.contains("nacos.weight (java.lang.StringBuilder)");
	}

	@Test
	void parsingNeverThrows() {
		Map<String, String> throwing = new HashMap<>() {

			@Override
			public String get(Object key) {
				throw new IllegalStateException("no");
			}

		};
		throwing.put("weight", "5");
		for (int refresh = 0; refresh < 3; refresh++) {
			assertThat(this.parser.parse(custom("throwing", throwing))).isEqualTo(InstanceAttributes.DEFAULTS);
		}
		Map<String, String> nullKey = new HashMap<>();
		nullKey.put(null, "x");
		nullKey.put("weight", "5");
		assertThat(this.parser.parse(custom("null-key", nullKey)).weight()).isEqualTo(5.0);
		assertThat(this.meters.counter("atlas.metadata.invalid", "service", "user-service").count()).isEqualTo(1);
	}

	private static ServiceInstance custom(String id, Map<String, String> metadata) {
		return new DefaultServiceInstance(id, "user-service", id + ".local", 8080, false, metadata);
	}

	@Test
	void nullMetadataAndNullValuesAreMissing() {
		ServiceInstance noMetadata = new DefaultServiceInstance("n", "user-service", "h", 1, false, null);
		assertThat(this.parser.parse(noMetadata)).isEqualTo(InstanceAttributes.DEFAULTS);
		Map<String, String> withNulls = new HashMap<>();
		withNulls.put("weight", null);
		withNulls.put("zone", null);
		ServiceInstance nulls = new DefaultServiceInstance("m", "user-service", "h", 1, false, withNulls);
		assertThat(this.parser.parse(nulls)).isEqualTo(InstanceAttributes.DEFAULTS);
	}

	@Test
	void clusterComesFromNacosThenZoneAndIsCaseInsensitive() {
		assertThat(this.parser.parse(nacos("a", 1.0, "SH", true)).cluster()).isEqualTo("sh");
		assertThat(this.parser.parse(instance("b", "zone", "Sh")).cluster()).isEqualTo("sh");
		assertThat(this.parser.parse(instance("c", "nacos.cluster", "BJ", "zone", "sh")).cluster()).isEqualTo("bj");
		assertThat(this.parser.parse(instance("d", "zone", "  ")).cluster()).isNull();
	}

	@Test
	void tagHealthAndRegistrationTime() {
		InstanceAttributes parsed = this.parser
			.parse(instance("a", "version", "v2", "atlas.registered-at", "1700000000000"));
		assertThat(parsed.tag()).isEqualTo("v2");
		assertThat(parsed.registeredAtMillis()).isEqualTo(1_700_000_000_000L);
		assertThat(this.parser.parse(instance("b", "version", "")).tag()).isNull();
		assertThat(this.parser.parse(instance("c", "atlas.registered-at", "yesterday")).registeredAtMillis())
			.isEqualTo(InstanceAttributes.UNKNOWN_REGISTRATION_TIME);
		assertThat(this.parser.parse(nacos("d", 1.0, "DEFAULT", false)).healthy()).isFalse();
		assertThat(this.parser.parse(nacos("e", 1.0, "DEFAULT", true)).healthy()).isTrue();
	}

	@Test
	@SuppressWarnings({ "unchecked", "rawtypes" })
	void aRegistrationTimeNumberThatIsNoTimeIsMissingWithAWarningAndACount(CapturedOutput output) {
		// Before, NaN became 0 (warm at once) and an infinity Long.MAX_VALUE (cold for
		// ever), silently; now each is handled like the same text: missing, WARN, count.
		Object[] invalid = { Double.NaN, Double.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN, -1.0, 1e19,
				new BigInteger("100000000000000000000"), "-5", "soon" };
		for (int i = 0; i < invalid.length; i++) {
			Map raw = new HashMap();
			raw.put("atlas.registered-at", invalid[i]);
			assertThat(this.parser.parse(custom("r" + i, raw)).registeredAtMillis()).as("%s", invalid[i])
				.isEqualTo(InstanceAttributes.UNKNOWN_REGISTRATION_TIME);
		}
		assertThat(this.meters.counter("atlas.metadata.invalid", "service", "user-service").count())
			.isEqualTo(invalid.length);
		assertThat(output.getOut()).contains("metadata atlas.registered-at='NaN' is not an epoch-millisecond time",
				"metadata atlas.registered-at='Infinity' is not an epoch-millisecond time",
				"metadata atlas.registered-at='-Infinity' is not an epoch-millisecond time");
		// A finite number in range is its value, a fractional one truncated.
		Map raw = new HashMap();
		raw.put("atlas.registered-at", 1.7000000000005E12);
		assertThat(this.parser.parse(custom("fractional", raw)).registeredAtMillis()).isEqualTo(1_700_000_000_000L);
		assertThat(this.meters.counter("atlas.metadata.invalid", "service", "user-service").count())
			.isEqualTo(invalid.length);
	}

	@Test
	void anInstanceIsDescribedAsItsKey() {
		ServiceInstance named = new DefaultServiceInstance("user-1", "user-service", "10.0.0.1", 8080, false);
		ServiceInstance addressed = new DefaultServiceInstance("10.0.0.1:8080", "user-service", "10.0.0.1", 8080,
				false);
		ServiceInstance anonymous = new DefaultServiceInstance(null, "user-service", "10.0.0.1", 8080, false);
		assertThat(InstanceAttributesParser.describe(named)).isEqualTo("10.0.0.1:8080 (user-1)")
			.isEqualTo(InstanceKey.of(named).toString());
		assertThat(InstanceAttributesParser.describe(addressed)).isEqualTo("10.0.0.1:8080")
			.isEqualTo(InstanceKey.of(addressed).toString());
		assertThat(InstanceAttributesParser.describe(anonymous)).isEqualTo("10.0.0.1:8080")
			.isEqualTo(InstanceKey.of(anonymous).toString());
		assertThat(InstanceKey.of(named).matches("user-1", "10.0.0.1", 8080)).isTrue();
		assertThat(InstanceKey.of(named).matches("user-1", "10.0.0.1", 8081)).isFalse();
		assertThat(InstanceKey.of(anonymous).matches(null, "10.0.0.1", 8080)).isTrue();
		assertThat(InstanceKey.of(anonymous).matches("user-1", "10.0.0.1", 8080)).isFalse();
	}

	@Test
	void tagKeyIsConfigurable() {
		InstanceAttributesParser lane = new InstanceAttributesParser("s", "lane", this.meters);
		assertThat(lane.parse(instance("a", "lane", "gray", "version", "v2")).tag()).isEqualTo("gray");
	}

	/**
	 * A real NacosServiceInstance with the metadata Spring Cloud Alibaba's
	 * NacosServiceDiscovery writes.
	 */
	static NacosServiceInstance nacos(String id, double weight, String cluster, boolean healthy) {
		NacosServiceInstance instance = new NacosServiceInstance();
		instance.setInstanceId(id);
		instance.setServiceId("user-service");
		instance.setHost(id + ".local");
		instance.setPort(8080);
		Map<String, String> metadata = new HashMap<>();
		metadata.put("nacos.instanceId", id);
		metadata.put("nacos.weight", weight + "");
		metadata.put("nacos.healthy", healthy + "");
		metadata.put("nacos.cluster", cluster + "");
		metadata.put("nacos.ephemeral", "true");
		instance.setMetadata(metadata);
		return instance;
	}

}
