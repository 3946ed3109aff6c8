package dev.atlas.loadbalancer.outlier;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

import dev.atlas.loadbalancer.instance.InstanceKey;
import org.jspecify.annotations.Nullable;

/**
 * The instances of a service ejected at one moment, by {@link InstanceKey}: what
 * {@link OutlierEjection} reads on a pick (one volatile read of the detector's current
 * set) and memoizes its decision on, by identity. Immutable and thread-safe: an ejection
 * or a return replaces the set as a whole.
 */
final class Ejections {

	/** No instance ejected. */
	static final Ejections NONE = new Ejections(Map.of());

	private final Map<InstanceKey, TrackedInstance> byKey;

	private Ejections(Map<InstanceKey, TrackedInstance> byKey) {
		this.byKey = byKey;
	}

	/**
	 * How many instances are ejected.
	 * @return {@code >= 0}
	 */
	int size() {
		return this.byKey.size();
	}

	/**
	 * Whether an instance is ejected.
	 * @param key the instance
	 * @return {@code true} when it is
	 */
	boolean contains(InstanceKey key) {
		return this.byKey.containsKey(key);
	}

	/**
	 * The state of an ejected instance.
	 * @param key the instance
	 * @return its state, or {@code null} when it is not ejected
	 */
	@Nullable TrackedInstance get(InstanceKey key) {
		return this.byKey.get(key);
	}

	/**
	 * These ejections and one more.
	 * @param instance the instance ejected
	 * @return a new set
	 */
	Ejections with(TrackedInstance instance) {
		Map<InstanceKey, TrackedInstance> more = new HashMap<>(this.byKey);
		more.put(instance.key, instance);
		return new Ejections(Collections.unmodifiableMap(more));
	}

	/**
	 * These ejections but one.
	 * @param key the instance that returns
	 * @return a new set, or {@link #NONE}
	 */
	Ejections without(InstanceKey key) {
		Map<InstanceKey, TrackedInstance> fewer = new HashMap<>(this.byKey);
		fewer.remove(key);
		return fewer.isEmpty() ? NONE : new Ejections(Collections.unmodifiableMap(fewer));
	}

}
