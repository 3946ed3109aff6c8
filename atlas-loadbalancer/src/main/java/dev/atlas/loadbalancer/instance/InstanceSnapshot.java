package dev.atlas.loadbalancer.instance;

import java.util.List;

import org.springframework.cloud.client.ServiceInstance;

/**
 * The parsed view of one instance list as emitted by the supplier chain: every instance's attributes are
 * read exactly once, when the snapshot is built, so that choosing is a table lookup.
 *
 * <p>A snapshot remembers the list it was built from by identity ({@link #isSnapshotOf(List)}): Spring
 * Cloud LoadBalancer's cache emits the same list object until the next refresh, so a balancer rebuilds
 * its snapshot exactly when the registry's answer changes.
 *
 * <p>Immutable after construction and therefore thread-safe; publish it through a {@code volatile} field.
 */
public final class InstanceSnapshot {

	private final List<ServiceInstance> source;

	private final ServiceInstance[] instances;

	private final InstanceAttributes[] attributes;

	private final double totalWeight;

	private InstanceSnapshot(List<ServiceInstance> source, ServiceInstance[] instances,
			InstanceAttributes[] attributes, double totalWeight) {
		this.source = source;
		this.instances = instances;
		this.attributes = attributes;
		this.totalWeight = totalWeight;
	}

	/**
	 * Builds a snapshot, parsing each instance once. {@code null} elements of the list are skipped.
	 * @param source the list emitted by the supplier chain; not {@code null}, may be empty; not copied, so it
	 *     must not be mutated afterwards (Spring's suppliers never do)
	 * @param parser reads the attributes; not {@code null}
	 * @return the snapshot, never {@code null}
	 */
	public static InstanceSnapshot of(List<ServiceInstance> source, InstanceAttributesParser parser) {
		int size = 0;
		ServiceInstance[] instances = new ServiceInstance[source.size()];
		InstanceAttributes[] attributes = new InstanceAttributes[source.size()];
		double total = 0;
		for (ServiceInstance instance : source) {
			if (instance == null) {
				continue;
			}
			InstanceAttributes parsed = parser.parse(instance);
			instances[size] = instance;
			attributes[size] = parsed;
			total += parsed.weight();
			size++;
		}
		if (size < instances.length) {
			instances = java.util.Arrays.copyOf(instances, size);
			attributes = java.util.Arrays.copyOf(attributes, size);
		}
		return new InstanceSnapshot(source, instances, attributes, total);
	}

	/**
	 * Whether this snapshot was built from exactly this list object.
	 * @param list a list emitted by the supplier chain, may be {@code null}
	 * @return {@code true} on identity, not on equality
	 */
	public boolean isSnapshotOf(List<ServiceInstance> list) {
		return this.source == list;
	}

	/**
	 * Number of instances.
	 * @return {@code >= 0}
	 */
	public int size() {
		return this.instances.length;
	}

	/**
	 * The instance at an index, the very object the supplier produced.
	 * @param index {@code 0 <= index < size()}
	 * @return never {@code null}
	 */
	public ServiceInstance instance(int index) {
		return this.instances[index];
	}

	/**
	 * The parsed attributes of the instance at an index.
	 * @param index {@code 0 <= index < size()}
	 * @return never {@code null}
	 */
	public InstanceAttributes attributes(int index) {
		return this.attributes[index];
	}

	/**
	 * The weights of all instances, in list order.
	 * @return a new array of finite values {@code >= 0}
	 */
	public double[] weights() {
		double[] weights = new double[this.attributes.length];
		for (int i = 0; i < weights.length; i++) {
			weights[i] = this.attributes[i].weight();
		}
		return weights;
	}

	/**
	 * Sum of all weights.
	 * @return {@code >= 0}; {@code 0} when the list is empty or every instance is drained
	 */
	public double totalWeight() {
		return this.totalWeight;
	}

}
