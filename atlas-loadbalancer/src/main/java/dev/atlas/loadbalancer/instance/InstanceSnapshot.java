package dev.atlas.loadbalancer.instance;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.AbstractList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;
import java.util.function.Function;
import java.util.function.IntPredicate;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;

/**
 * An immutable instance list whose elements' attributes were parsed exactly once, when
 * the snapshot was built from the list the registry returned. Atlas's supplier stages
 * pass snapshots to each other (a snapshot <em>is</em> a {@code List<ServiceInstance>}
 * holding the very objects the registry client produced), so no stage and no balancer
 * parses metadata again.
 *
 * <p>
 * Each element carries its parsed {@link InstanceAttributes}, its {@link InstanceKey}
 * (id, host and port: what state that outlives the snapshot is keyed by) and an
 * <em>effective weight</em>: the configured weight, or what a stage (e.g. warmup) made of
 * it. Work derived from a snapshot (a filtered subset, a balancer's selection table) is
 * memoized on the snapshot itself with {@link #derive}, so the per-request cost of every
 * stage is a short scan by identity.
 *
 * <p>
 * <strong>Equality is identity</strong>, unlike {@link List#equals}: two snapshots are
 * equal only if they are the same object, even with the same elements, because a snapshot
 * is also the key of everything derived from it (two refreshes with equal content are two
 * snapshots, each with its own effective weights and memoized tables). A snapshot is
 * therefore not equal to a {@code List} holding the same instances, nor that list to it
 * symmetrically; compare contents with {@code List.copyOf(snapshot)}.
 *
 * <p>
 * Immutable and thread-safe; {@code derive} may run a function twice under a race, never
 * concurrently returning different values to the same caller after it has been stored.
 *
 * @since 0.1.0
 */
public final class InstanceSnapshot extends AbstractList<ServiceInstance> implements RandomAccess {

	private static final InstanceAttributes[] NO_ATTRIBUTES = {};

	private static final InstanceKey[] NO_KEYS = {};

	/** A snapshot without instances. */
	public static final InstanceSnapshot EMPTY = new InstanceSnapshot(new ServiceInstance[0], NO_ATTRIBUTES, NO_KEYS,
			new double[0], false);

	private final ServiceInstance[] instances;

	private final InstanceAttributes[] attributes;

	private final InstanceKey[] keys;

	private final double[] weights;

	private final boolean shortLived;

	private static final Object[] NOTHING_DERIVED = {};

	private static final VarHandle DERIVED;

	static {
		try {
			DERIVED = MethodHandles.lookup().findVarHandle(InstanceSnapshot.class, "derived", Object[].class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	/**
	 * What was derived, as key, value, key, value, ...; replaced as a whole (copy on
	 * write). A handful of keys per snapshot (one per stage and balancer), so a scan by
	 * identity beats a hash map's lookup, and it is on every request.
	 */
	private volatile Object[] derived = NOTHING_DERIVED;

	private InstanceSnapshot(ServiceInstance[] instances, InstanceAttributes[] attributes, InstanceKey[] keys,
			double[] weights, boolean shortLived) {
		this.instances = instances;
		this.attributes = attributes;
		this.keys = keys;
		this.weights = weights;
		this.shortLived = shortLived;
	}

	/**
	 * Builds a snapshot, parsing each instance and computing its {@link InstanceKey}
	 * once; a list that already is a snapshot is returned as is. {@code null} elements
	 * are skipped. Instances that share an instance id at different addresses are
	 * reported through the parser (one WARN per service and id).
	 * @param source the list emitted by the supplier chain, may be empty
	 * @param parser reads the attributes
	 * @return the snapshot
	 */
	public static InstanceSnapshot of(List<ServiceInstance> source, InstanceAttributesParser parser) {
		if (source instanceof InstanceSnapshot snapshot) {
			return snapshot;
		}
		int size = 0;
		ServiceInstance[] instances = new ServiceInstance[source.size()];
		InstanceAttributes[] attributes = (instances.length == 0) ? NO_ATTRIBUTES
				: new InstanceAttributes[instances.length];
		InstanceKey[] keys = (instances.length == 0) ? NO_KEYS : new InstanceKey[instances.length];
		for (ServiceInstance instance : source) {
			if (instance == null) {
				continue;
			}
			instances[size] = instance;
			attributes[size] = parser.parse(instance);
			keys[size] = InstanceKey.of(instance);
			size++;
		}
		if (size < instances.length) {
			instances = Arrays.copyOf(instances, size);
			attributes = Arrays.copyOf(attributes, size);
			keys = Arrays.copyOf(keys, size);
		}
		double[] weights = new double[size];
		for (int i = 0; i < size; i++) {
			weights[i] = attributes[i].weight();
		}
		if (size > 1) {
			parser.duplicateIds(keys);
		}
		return new InstanceSnapshot(instances, attributes, keys, weights, false);
	}

	/**
	 * The elements for which a predicate holds, with their attributes and effective
	 * weights.
	 * @param keep called once per index, {@code 0 <= index < size()}
	 * @return this snapshot when every element is kept, else a new one (with nothing
	 * derived yet), {@linkplain #isShortLived() short-lived} when this one is
	 */
	public InstanceSnapshot filter(IntPredicate keep) {
		int[] kept = new int[this.instances.length];
		int size = 0;
		for (int i = 0; i < this.instances.length; i++) {
			if (keep.test(i)) {
				kept[size++] = i;
			}
		}
		if (size == this.instances.length) {
			return this;
		}
		ServiceInstance[] instances = new ServiceInstance[size];
		InstanceAttributes[] attributes = new InstanceAttributes[size];
		InstanceKey[] keys = new InstanceKey[size];
		double[] weights = new double[size];
		for (int k = 0; k < size; k++) {
			instances[k] = this.instances[kept[k]];
			attributes[k] = this.attributes[kept[k]];
			keys[k] = this.keys[kept[k]];
			weights[k] = this.weights[kept[k]];
		}
		return new InstanceSnapshot(instances, attributes, keys, weights, this.shortLived);
	}

	/**
	 * The same elements, marked as a short-lived candidate set: one that a stage made for
	 * a particular kind of request and memoizes on its parent snapshot, such as a retry's
	 * set without the instance that just failed ({@code RetryAvoidance}). A strategy
	 * keeps state for such a set on the snapshot only ({@link #derive}), not in state
	 * that outlives refreshes: there is one such set per instance of the parent, and
	 * remembering each beyond its snapshot would cost memory quadratic in the fleet's
	 * size.
	 * @return this snapshot when it is already short-lived, else a new one with the same
	 * elements and effective weights (nothing derived yet)
	 */
	public InstanceSnapshot asShortLived() {
		return this.shortLived ? this
				: new InstanceSnapshot(this.instances, this.attributes, this.keys, this.weights, true);
	}

	/**
	 * Whether this is a {@linkplain #asShortLived() short-lived} candidate set, whose
	 * per-set state a strategy keeps on the snapshot only. Snapshots built with
	 * {@link #of} are not; {@link #filter} and {@link #withEffectiveWeights} keep the
	 * mark.
	 * @return {@code true} for a short-lived set
	 */
	public boolean isShortLived() {
		return this.shortLived;
	}

	/**
	 * The same elements with other effective weights.
	 * @param effectiveWeights one finite weight {@code >= 0} per element; copied
	 * @return a new snapshot, {@linkplain #isShortLived() short-lived} when this one is
	 * @throws IllegalArgumentException if the length differs from {@link #size()} or a
	 * weight is invalid
	 */
	public InstanceSnapshot withEffectiveWeights(double[] effectiveWeights) {
		if (effectiveWeights.length != this.instances.length) {
			throw new IllegalArgumentException(
					"expected " + this.instances.length + " weights, got " + effectiveWeights.length);
		}
		for (double weight : effectiveWeights) {
			if (!(weight >= 0) || Double.isInfinite(weight)) {
				throw new IllegalArgumentException("weights must be finite and >= 0, found " + weight);
			}
		}
		return new InstanceSnapshot(this.instances, this.attributes, this.keys, effectiveWeights.clone(),
				this.shortLived);
	}

	/**
	 * Returns what {@code function} derives from this snapshot, computing it at most once
	 * per key (but for a harmless race when two threads ask for the same key at once: one
	 * result is kept and returned to both). Keys are compared by identity. Meant for a
	 * few keys per snapshot (the stages and balancers that see it): a lookup is a scan of
	 * the keys derived so far. Lock-free.
	 * @param key identifies the derivation, typically the stage or balancer object itself
	 * @param function derives the value from this snapshot; must not return {@code null}
	 * @param <T> the value type
	 * @return the memoized value
	 */
	@SuppressWarnings("unchecked")
	public <T> T derive(Object key, Function<InstanceSnapshot, T> function) {
		// The look-up alone, small enough for the JIT to inline at every call site (a
		// pick makes several); the first derivation is out of line.
		Object[] pairs = this.derived;
		for (int i = 0; i < pairs.length; i += 2) {
			if (pairs[i] == key) {
				return (T) pairs[i + 1];
			}
		}
		return deriveFirst(key, function, pairs);
	}

	/**
	 * What was derived from this snapshot under a key, without deriving it.
	 * @param key the key given to {@link #derive}, compared by identity
	 * @return the value, or {@code null} when nothing was derived under that key
	 */
	public @Nullable Object derived(Object key) {
		Object[] pairs = this.derived;
		for (int i = 0; i < pairs.length; i += 2) {
			if (pairs[i] == key) {
				return pairs[i + 1];
			}
		}
		return null;
	}

	@SuppressWarnings("unchecked")
	private <T> T deriveFirst(Object key, Function<InstanceSnapshot, T> function, Object[] seen) {
		Object[] pairs = seen;
		Object value = Objects.requireNonNull(function.apply(this), "derived value");
		while (true) {
			for (int i = 0; i < pairs.length; i += 2) {
				if (pairs[i] == key) {
					return (T) pairs[i + 1];
				}
			}
			Object[] more = Arrays.copyOf(pairs, pairs.length + 2);
			more[pairs.length] = key;
			more[pairs.length + 1] = value;
			if (DERIVED.compareAndSet(this, pairs, more)) {
				return (T) value;
			}
			pairs = this.derived;
		}
	}

	/**
	 * The instance at an index, the very object the registry client produced.
	 * @param index {@code 0 <= index < size()}
	 * @return the instance
	 */
	@Override
	public ServiceInstance get(int index) {
		return this.instances[index];
	}

	@Override
	public int size() {
		return this.instances.length;
	}

	/**
	 * Whether the snapshot has no instance; overridden here (the class is final) rather
	 * than inherited, so that the stages' checks on every pick need no virtual call.
	 * @return {@code true} when {@link #size()} is {@code 0}
	 */
	@Override
	public boolean isEmpty() {
		return this.instances.length == 0;
	}

	/**
	 * The parsed attributes of the instance at an index.
	 * @param index {@code 0 <= index < size()}
	 * @return the attributes
	 */
	public InstanceAttributes attributes(int index) {
		return this.attributes[index];
	}

	/**
	 * The identity of the instance at an index (id, host and port), computed once when
	 * the snapshot was built: what state that outlives the snapshot is keyed by.
	 * @param index {@code 0 <= index < size()}
	 * @return the key
	 */
	public InstanceKey key(int index) {
		return this.keys[index];
	}

	/**
	 * The effective weight of the instance at an index: its configured weight unless a
	 * stage changed it.
	 * @param index {@code 0 <= index < size()}
	 * @return a finite value {@code >= 0}
	 */
	public double effectiveWeight(int index) {
		return this.weights[index];
	}

	/**
	 * The effective weights of all instances, in list order.
	 * @return a new array of finite values {@code >= 0}
	 */
	public double[] effectiveWeights() {
		return this.weights.clone();
	}

	/**
	 * Sum of the effective weights.
	 * @return {@code >= 0}; {@code 0} when the list is empty or every instance is drained
	 */
	public double totalEffectiveWeight() {
		double total = 0;
		for (double weight : this.weights) {
			total += weight;
		}
		return total;
	}

	/**
	 * Identity, not {@link List#equals}: see the class documentation.
	 * @param other any object
	 * @return {@code true} only for this very snapshot
	 */
	@Override
	public boolean equals(Object other) {
		return this == other;
	}

	@Override
	public int hashCode() {
		return System.identityHashCode(this);
	}

}
