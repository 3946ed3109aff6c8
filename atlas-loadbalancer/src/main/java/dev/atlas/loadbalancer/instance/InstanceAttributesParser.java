package dev.atlas.loadbalancer.instance;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.StringJoiner;

import dev.atlas.loadbalancer.support.OncePerKeyLog;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.util.ClassUtils;

/**
 * Reads {@link InstanceAttributes} from a {@link ServiceInstance}'s metadata, and from
 * the pod labels a Spring Cloud Kubernetes instance carries. Called once per instance per
 * instance-list snapshot, never per request.
 *
 * <p>
 * Rules (see {@link MetadataKeys} for the keys and their precedence):
 * <ul>
 * <li>weight: {@code nacos.weight}, then {@code weight}; int or float, surrounding blanks
 * trimmed ({@code " 2 "} is 2). A {@link Number} value (a raw-typed map of a custom
 * {@code ServiceInstance}) is taken as the weight it holds. Missing gives {@code 1}.
 * Unparsable, NaN or infinite gives {@code 1}, one WARN per instance and value, and one
 * increment of the {@value #INVALID_WEIGHTS_METER} counter. Negative gives {@code 0}
 * (drained, never promoted to the default), with the same WARN and counter.</li>
 * <li>cluster: {@code nacos.cluster}, then {@code zone}, then the pod label
 * {@code topology.kubernetes.io/zone} ({@link MetadataKeys#KUBERNETES_ZONE_LABEL}); blank
 * counts as missing; lower-cased.</li>
 * <li>tag: the configured key (default {@code version}), then the pod label of that name;
 * blank counts as untagged; lower-cased.</li>
 * <li>registered-at: {@code atlas.registered-at} in epoch ms (a string, or a
 * {@link Number}); unparsable or negative counts as missing (one WARN).</li>
 * <li>healthy: {@code false} only for an explicit {@code nacos.healthy=false}.</li>
 * </ul>
 * {@code null} metadata, and {@code null} values in it, count as missing.
 *
 * <p>
 * <strong>Pod labels</strong> are those of a Spring Cloud Kubernetes
 * {@code KubernetesServiceInstance}: the {@code "labels"} entry of its
 * {@code podMetadata()}, filled by its discovery client only with
 * {@code spring.cloud.kubernetes.discovery.metadata.add-pod-labels=true}; no Kubernetes
 * API call is made here. They are read only after the metadata, and only when
 * {@code spring-cloud-kubernetes-commons} is on the class path (an optional dependency;
 * any other instance has none). Spring Cloud Kubernetes puts no pod label in the metadata
 * except {@code zone} (copied to the {@code zone} metadata since 3.3.2 and 5.0.2); the
 * labels it does put there, unprefixed unless
 * {@code spring.cloud.kubernetes.discovery.metadata.labels-prefix} is set, are the
 * <em>Service</em>'s, one set for all its pods. So a metadata entry named
 * {@code topology.kubernetes.io/zone} is not read as the zone, and a Service label named
 * as the tag key tags every pod of the Service, before any pod label of that name.
 *
 * <p>
 * <strong>Parsing never throws.</strong> Metadata that cannot be read (the map, or
 * {@code getMetadata()} itself, throws) gives {@link InstanceAttributes#DEFAULTS} (weight
 * 1, no cluster, untagged, healthy); a value that is neither a string nor, where a number
 * is meant, a {@link Number} counts as missing. Either way: one WARN per instance and
 * problem, and one increment of the {@value #INVALID_METADATA_METER} counter.
 *
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class InstanceAttributesParser {

	/** Name of the counter of invalid weights; tags {@code service}. */
	public static final String INVALID_WEIGHTS_METER = "atlas.weights.invalid";

	/**
	 * Name of the counter of instances whose metadata could not be read, held a value of
	 * the wrong type under a key Atlas reads, or an {@code atlas.registered-at} that is
	 * not an epoch-millisecond time (unparsable, negative, NaN, infinite or beyond a
	 * {@code long}; counted once per instance and problem); tags {@code service}.
	 */
	public static final String INVALID_METADATA_METER = "atlas.metadata.invalid";

	private static final Logger log = LoggerFactory.getLogger(InstanceAttributesParser.class);

	/**
	 * Whether Spring Cloud Kubernetes' instance type is on the class path;
	 * {@link KubernetesPodLabels}, which names it, is loaded only then.
	 */
	private static final boolean KUBERNETES_PRESENT = ClassUtils.isPresent(
			"org.springframework.cloud.kubernetes.commons.discovery.KubernetesServiceInstance",
			InstanceAttributesParser.class.getClassLoader());

	private final String serviceId;

	private final String tagKey;

	private final OncePerKeyLog warnings = new OncePerKeyLog();

	private final Counter invalidWeights;

	private final Counter invalidMetadata;

	/**
	 * Creates a parser for one service.
	 * @param serviceId the service whose instances are parsed, used in log lines and as
	 * the {@code service} tag
	 * @param tagKey metadata key of the gray tag, e.g. {@code version}; not blank
	 * @param meterRegistry where {@value #INVALID_WEIGHTS_METER} and
	 * {@value #INVALID_METADATA_METER} are registered; not {@code null}
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
		this.invalidMetadata = Counter.builder(INVALID_METADATA_METER)
			.description("Instances whose metadata could not be read or held a value of the wrong type "
					+ "(counted once each)")
			.tag("service", serviceId)
			.register(meterRegistry);
	}

	/**
	 * Parses one instance. Never throws for anything its metadata does (see the class
	 * documentation).
	 * @param instance any {@link ServiceInstance}, its metadata may be {@code null}; not
	 * {@code null} itself
	 * @return the attributes
	 */
	public InstanceAttributes parse(ServiceInstance instance) {
		Metadata metadata;
		try {
			// Raw types from a custom ServiceInstance: read values as Object, never as
			// String, so that a wrong type is seen here and not as a ClassCastException.
			Map<?, ?> map = instance.getMetadata();
			Map<?, ?> podLabels = KUBERNETES_PRESENT ? KubernetesPodLabels.of(instance) : null;
			if ((map == null || map.isEmpty()) && podLabels == null) {
				return InstanceAttributes.DEFAULTS;
			}
			metadata = new Metadata((map != null) ? map : Map.of(), podLabels);
		}
		catch (RuntimeException ex) {
			unreadable(instance, ex);
			return InstanceAttributes.DEFAULTS;
		}
		InstanceAttributes attributes;
		try {
			String cluster = metadata.text(MetadataKeys.NACOS_CLUSTER);
			if (cluster == null) {
				cluster = metadata.text(MetadataKeys.ZONE);
			}
			if (cluster == null) {
				cluster = metadata.podLabel(MetadataKeys.KUBERNETES_ZONE_LABEL);
			}
			String tag = metadata.text(this.tagKey);
			if (tag == null) {
				tag = metadata.podLabel(this.tagKey);
			}
			boolean healthy = !"false".equalsIgnoreCase(metadata.text(MetadataKeys.NACOS_HEALTHY));
			attributes = new InstanceAttributes(weight(instance, metadata),
					(cluster != null) ? cluster.toLowerCase(Locale.ROOT) : null,
					(tag != null) ? tag.toLowerCase(Locale.ROOT) : null, registeredAt(instance, metadata), healthy);
		}
		catch (RuntimeException ex) {
			unreadable(instance, ex);
			return InstanceAttributes.DEFAULTS;
		}
		if (metadata.wrongTypes != null) {
			wrongTypes(instance, metadata.wrongTypes);
		}
		return attributes;
	}

	private double weight(ServiceInstance instance, Metadata metadata) {
		String key = MetadataKeys.NACOS_WEIGHT;
		Object value = metadata.textOrNumber(key);
		if (value == null) {
			key = MetadataKeys.WEIGHT;
			value = metadata.textOrNumber(key);
		}
		if (value == null) {
			return 1.0;
		}
		double weight;
		if (value instanceof Number number) {
			weight = number.doubleValue();
		}
		else {
			try {
				weight = Double.parseDouble((String) value);
			}
			catch (NumberFormatException ex) {
				weight = Double.NaN;
			}
		}
		if (Double.isNaN(weight) || Double.isInfinite(weight)) {
			invalid(instance, key, value, "is not a finite number; using the default weight 1");
			return 1.0;
		}
		if (weight < 0) {
			invalid(instance, key, value, "is negative; the instance is drained (weight 0)");
			return 0.0;
		}
		return weight;
	}

	private void invalid(ServiceInstance instance, String key, Object raw, String consequence) {
		String id = describe(instance);
		this.warnings.once(id + '/' + key + '=' + raw, (k) -> {
			this.invalidWeights.increment();
			log.warn("Service '{}', instance {}: metadata {}='{}' {}", this.serviceId, id, key, raw, consequence);
		});
	}

	private void unreadable(ServiceInstance instance, RuntimeException ex) {
		String id = describe(instance);
		this.warnings.once(id + "/metadata-unreadable", (k) -> {
			this.invalidMetadata.increment();
			log.warn("Service '{}', instance {}: metadata cannot be read ({}); using the defaults "
					+ "(weight 1, no cluster, untagged)", this.serviceId, id, ex.toString());
		});
	}

	private void wrongTypes(ServiceInstance instance, List<String> keys) {
		String id = describe(instance);
		String found = String.join(", ", keys);
		this.warnings.once(id + "/metadata-types/" + found, (k) -> {
			this.invalidMetadata.increment();
			log.warn("Service '{}', instance {}: metadata values that are not strings are ignored: {}; "
					+ "using the defaults for them", this.serviceId, id, found);
		});
	}

	private long registeredAt(ServiceInstance instance, Metadata metadata) {
		Object raw = metadata.textOrNumber(MetadataKeys.REGISTERED_AT);
		if (raw == null) {
			return InstanceAttributes.UNKNOWN_REGISTRATION_TIME;
		}
		if (raw instanceof Number number) {
			// As the same text would be: NaN, an infinity or a value beyond a long (which
			// longValue() would make 0 or Long.MAX_VALUE: warm at once, or cold forever)
			// is not a time; neither is a negative one.
			double asDouble = number.doubleValue();
			if (asDouble >= 0 && asDouble < 0x1p63) {
				return number.longValue();
			}
		}
		else {
			try {
				long value = Long.parseLong((String) raw);
				if (value >= 0) {
					return value;
				}
			}
			catch (NumberFormatException ex) {
				// reported below
			}
		}
		String id = describe(instance);
		this.warnings.once(id + '/' + MetadataKeys.REGISTERED_AT + '=' + raw, (k) -> {
			this.invalidMetadata.increment();
			log.warn(
					"Service '{}', instance {}: metadata {}='{}' is not an epoch-millisecond time; "
							+ "treating the instance as first seen now",
					this.serviceId, id, MetadataKeys.REGISTERED_AT, raw);
		});
		return InstanceAttributes.UNKNOWN_REGISTRATION_TIME;
	}

	/**
	 * Reports instances of one list that share an instance id at different addresses: one
	 * WARN per service and id (not per list, nor per refresh), naming the addresses.
	 * Atlas tells them apart by id, host and port ({@link InstanceKey}).
	 * @param keys the keys of one list, in list order
	 */
	void duplicateIds(InstanceKey[] keys) {
		Map<String, InstanceKey> first = new HashMap<>(Math.max(16, keys.length * 2));
		Map<String, List<InstanceKey>> duplicates = null;
		for (InstanceKey key : keys) {
			String id = key.id();
			if (id == null) {
				continue;
			}
			InstanceKey previous = first.putIfAbsent(id, key);
			if (previous != null && !previous.equals(key)) {
				if (duplicates == null) {
					duplicates = new LinkedHashMap<>();
				}
				List<InstanceKey> sharing = duplicates.computeIfAbsent(id, (k) -> new ArrayList<>(List.of(previous)));
				if (!sharing.contains(key)) {
					sharing.add(key);
				}
			}
		}
		if (duplicates == null) {
			return;
		}
		duplicates.forEach((id, sharing) -> this.warnings.once("duplicate-id/" + id, (k) -> {
			StringJoiner addresses = new StringJoiner(", ");
			sharing.forEach((key) -> addresses.add(key.address()));
			log.warn(
					"Service '{}': {} instances report the same instance id '{}' ({}); Atlas tells them apart "
							+ "by id, host and port, but fix the registration: ids are meant to be unique",
					this.serviceId, sharing.size(), id, addresses);
		}));
	}

	/**
	 * A short, stable description of an instance for log lines: {@code host:port}, plus
	 * the instance id when there is one that differs from it; the same text as
	 * {@link InstanceKey#toString()} of its key.
	 * @param instance an instance
	 * @return the description
	 */
	public static String describe(ServiceInstance instance) {
		return InstanceKey.of(instance).toString();
	}

	private static @Nullable String trimToNull(@Nullable String value) {
		if (value == null) {
			return null;
		}
		String trimmed = value.trim();
		return trimmed.isEmpty() ? null : trimmed;
	}

	/**
	 * One instance's metadata, and its pod labels if it has any, read as untyped values;
	 * remembers the keys whose value had the wrong type. Used by one thread, for one
	 * parse.
	 */
	private static final class Metadata {

		@Nullable List<String> wrongTypes;

		private final Map<?, ?> map;

		private final @Nullable Map<?, ?> podLabels;

		Metadata(Map<?, ?> map, @Nullable Map<?, ?> podLabels) {
			this.map = map;
			this.podLabels = podLabels;
		}

		/** A string value, trimmed; {@code null} when missing, blank or not a string. */
		@Nullable String text(String key) {
			return text(this.map, key, "");
		}

		/**
		 * A pod label's value, trimmed; {@code null} when there are no pod labels, or the
		 * label is missing, blank or not a string.
		 */
		@Nullable String podLabel(String key) {
			return (this.podLabels != null) ? text(this.podLabels, key, "pod label ") : null;
		}

		private @Nullable String text(Map<?, ?> source, String key, String prefix) {
			Object value = source.get(key);
			if (value == null || value instanceof String) {
				return trimToNull((String) value);
			}
			wrongType(prefix + key, value);
			return null;
		}

		/**
		 * A trimmed non-blank string or a {@link Number}; {@code null} when missing,
		 * blank or of another type.
		 */
		@Nullable Object textOrNumber(String key) {
			Object value = this.map.get(key);
			if (value instanceof Number) {
				return value;
			}
			if (value == null || value instanceof String) {
				return trimToNull((String) value);
			}
			wrongType(key, value);
			return null;
		}

		private void wrongType(String key, Object value) {
			if (this.wrongTypes == null) {
				this.wrongTypes = new ArrayList<>(2);
			}
			this.wrongTypes.add(key + " (" + value.getClass().getName() + ')');
		}

	}

}
