package dev.atlas.loadbalancer.instance;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;

import dev.atlas.loadbalancer.support.OncePerKeyLog;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Reads {@link InstanceAttributes} from a {@link ServiceInstance}'s metadata. Called once
 * per instance per instance-list snapshot, never per request.
 *
 * <p>
 * Rules (see {@link MetadataKeys} for the keys and their precedence):
 * <ul>
 * <li>weight: {@code nacos.weight}, then {@code weight}; int or float, surrounding blanks
 * ignored. Missing gives {@code 1}. Unparsable, NaN or infinite gives {@code 1}, one WARN
 * per instance and value, and one increment of the {@code atlas.weights.invalid} counter.
 * Negative gives {@code 0} (drained, never promoted to the default), with the same WARN
 * and counter.</li>
 * <li>cluster: {@code nacos.cluster}, then {@code zone}; blank counts as missing;
 * lower-cased.</li>
 * <li>tag: the configured key (default {@code version}); blank counts as untagged;
 * lower-cased.</li>
 * <li>registered-at: {@code atlas.registered-at} in epoch ms; unparsable or negative
 * counts as missing (one WARN).</li>
 * <li>healthy: {@code false} only for an explicit {@code nacos.healthy=false}.</li>
 * </ul>
 * {@code null} metadata, and {@code null} values in it, count as missing. Parsing never
 * throws.
 *
 * <p>
 * Thread-safe.
 */
public final class InstanceAttributesParser {

	private static final Logger log = LoggerFactory.getLogger(InstanceAttributesParser.class);

	/** Name of the counter of invalid weights; tags {@code service}. */
	public static final String INVALID_WEIGHTS_METER = "atlas.weights.invalid";

	private final String serviceId;

	private final String tagKey;

	private final OncePerKeyLog warnings = new OncePerKeyLog();

	private final Counter invalidWeights;

	/**
	 * Creates a parser for one service.
	 * @param serviceId the service whose instances are parsed, used in log lines and as
	 * the {@code service} tag
	 * @param tagKey metadata key of the gray tag, e.g. {@code version}; not blank
	 * @param meterRegistry where {@value #INVALID_WEIGHTS_METER} is registered; not
	 * {@code null}
	 * @throws IllegalArgumentException if {@code tagKey} is blank
	 */
	public InstanceAttributesParser(String serviceId, String tagKey, MeterRegistry meterRegistry) {
		this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
		if (tagKey == null || tagKey.isBlank()) {
			throw new IllegalArgumentException("tagKey must not be blank");
		}
		this.tagKey = tagKey;
		this.invalidWeights = Counter.builder(INVALID_WEIGHTS_METER)
			.description("Instances whose weight metadata was unparsable or negative (counted once each)")
			.tag("service", serviceId)
			.register(meterRegistry);
	}

	/**
	 * Parses one instance.
	 * @param instance any {@link ServiceInstance}, its metadata may be {@code null}; not
	 * {@code null} itself
	 * @return the attributes
	 */
	public InstanceAttributes parse(ServiceInstance instance) {
		Map<String, String> metadata = instance.getMetadata();
		if (metadata == null || metadata.isEmpty()) {
			return InstanceAttributes.DEFAULTS;
		}
		String cluster = firstPresent(metadata, MetadataKeys.NACOS_CLUSTER, MetadataKeys.ZONE);
		String tag = trimToNull(metadata.get(this.tagKey));
		tag = (tag != null) ? tag.toLowerCase(Locale.ROOT) : null;
		boolean healthy = !"false".equalsIgnoreCase(trimToNull(metadata.get(MetadataKeys.NACOS_HEALTHY)));
		return new InstanceAttributes(weight(instance, metadata),
				(cluster != null) ? cluster.toLowerCase(Locale.ROOT) : null, tag, registeredAt(instance, metadata),
				healthy);
	}

	private double weight(ServiceInstance instance, Map<String, String> metadata) {
		String key = MetadataKeys.NACOS_WEIGHT;
		String raw = trimToNull(metadata.get(key));
		if (raw == null) {
			key = MetadataKeys.WEIGHT;
			raw = trimToNull(metadata.get(key));
		}
		if (raw == null) {
			return 1.0;
		}
		double weight;
		try {
			weight = Double.parseDouble(raw);
		}
		catch (NumberFormatException ex) {
			weight = Double.NaN;
		}
		if (Double.isNaN(weight) || Double.isInfinite(weight)) {
			invalid(instance, key, raw, "is not a finite number; using the default weight 1");
			return 1.0;
		}
		if (weight < 0) {
			invalid(instance, key, raw, "is negative; the instance is drained (weight 0)");
			return 0.0;
		}
		return weight;
	}

	private void invalid(ServiceInstance instance, String key, String raw, String consequence) {
		String id = describe(instance);
		this.warnings.once(id + '/' + key + '=' + raw, (k) -> {
			this.invalidWeights.increment();
			log.warn("Service '{}', instance {}: metadata {}='{}' {}", this.serviceId, id, key, raw, consequence);
		});
	}

	private long registeredAt(ServiceInstance instance, Map<String, String> metadata) {
		String raw = trimToNull(metadata.get(MetadataKeys.REGISTERED_AT));
		if (raw == null) {
			return InstanceAttributes.UNKNOWN_REGISTRATION_TIME;
		}
		try {
			long value = Long.parseLong(raw);
			if (value >= 0) {
				return value;
			}
		}
		catch (NumberFormatException ex) {
			// reported below
		}
		String id = describe(instance);
		this.warnings.once(id + '/' + MetadataKeys.REGISTERED_AT + '=' + raw,
				(k) -> log.warn(
						"Service '{}', instance {}: metadata {}='{}' is not an epoch-millisecond time; "
								+ "treating the instance as first seen now",
						this.serviceId, id, MetadataKeys.REGISTERED_AT, raw));
		return InstanceAttributes.UNKNOWN_REGISTRATION_TIME;
	}

	/**
	 * A short, stable description of an instance for log lines: {@code host:port}, plus
	 * the instance id when there is one.
	 * @param instance an instance
	 * @return the description
	 */
	public static String describe(ServiceInstance instance) {
		String hostPort = instance.getHost() + ':' + instance.getPort();
		String instanceId = instance.getInstanceId();
		return (instanceId == null || instanceId.equals(hostPort)) ? hostPort : hostPort + " (" + instanceId + ')';
	}

	private static @Nullable String firstPresent(Map<String, String> metadata, String first, String second) {
		String value = trimToNull(metadata.get(first));
		return (value != null) ? value : trimToNull(metadata.get(second));
	}

	private static @Nullable String trimToNull(@Nullable String value) {
		if (value == null) {
			return null;
		}
		String trimmed = value.trim();
		return trimmed.isEmpty() ? null : trimmed;
	}

}
