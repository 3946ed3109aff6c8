package dev.atlas.loadbalancer.instance;

import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * Turns the lists a supplier emits into {@link InstanceSnapshot}s, parsing a list only
 * when it is a new object: Spring Cloud LoadBalancer's cache emits the same list object
 * until the registry's answer changes, so parsing happens once per refresh. A list that
 * already is a snapshot is used as is.
 *
 * <p>
 * Remembers only the last list. Thread-safe and lock-free: under a race on a new list,
 * two threads may both parse it (each instance's WARNs still appear once, see
 * {@link InstanceAttributesParser}).
 *
 * @since 0.1.0
 */
public final class SnapshotCache {

	private final InstanceAttributesParser parser;

	private volatile @Nullable Entry last;

	/**
	 * Creates a cache.
	 * @param parser reads instance attributes
	 */
	public SnapshotCache(InstanceAttributesParser parser) {
		this.parser = Objects.requireNonNull(parser, "parser");
	}

	/**
	 * The snapshot of a list.
	 * @param list as emitted by a supplier; must not be mutated afterwards (Spring's
	 * suppliers never do)
	 * @return the snapshot
	 */
	public InstanceSnapshot snapshotOf(List<ServiceInstance> list) {
		if (list instanceof InstanceSnapshot snapshot) {
			return snapshot;
		}
		Entry entry = this.last;
		if (entry == null || entry.source != list) {
			entry = new Entry(list, InstanceSnapshot.of(list, this.parser));
			this.last = entry;
		}
		return entry.snapshot;
	}

	private record Entry(List<ServiceInstance> source, InstanceSnapshot snapshot) {
	}

}
