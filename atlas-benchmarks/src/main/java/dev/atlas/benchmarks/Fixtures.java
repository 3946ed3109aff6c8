package dev.atlas.benchmarks;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

import com.alibaba.cloud.nacos.NacosDiscoveryProperties;
import com.alibaba.cloud.nacos.discovery.NacosServiceDiscovery;
import com.alibaba.cloud.nacos.loadbalancer.DefaultLoadBalancerAlgorithm;
import com.alibaba.cloud.nacos.loadbalancer.LoadBalancerAlgorithm;
import com.alibaba.cloud.nacos.loadbalancer.NacosLoadBalancer;
import com.alibaba.cloud.nacos.util.InetIPv6Utils;
import com.alibaba.nacos.api.naming.pojo.Instance;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.commons.util.InetUtilsProperties;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.util.LinkedMultiValueMap;

/**
 * The instances, suppliers and requests every benchmark and the simulation share, built
 * the way production builds them, without a Spring context, a registry or a network.
 */
public final class Fixtures {

	/** The called service. */
	public static final String SERVICE_ID = "user-service";

	/**
	 * The caller's own cluster / zone, for Atlas's cluster affinity and Nacos's cluster
	 * preference.
	 */
	public static final String CALLER_CLUSTER = "a";

	/** The gray tag a share of the instances carries (the canary release). */
	public static final String CANARY_TAG = "v2";

	/** The header naming the wanted tag. */
	public static final String TAG_HEADER = "X-Service-Version";

	/** The header {@code ring-hash} reads its key from in the benchmarks. */
	public static final String USER_HEADER = "X-User-Id";

	private Fixtures() {
	}

	/**
	 * The configured weight of instance {@code i} of the benchmark fleet: 1, 2, 3, 4, 5,
	 * 1, 2 and so on.
	 * @param i index
	 * @return 1..5
	 */
	public static int weight(int i) {
		return 1 + (i % 5);
	}

	/**
	 * The benchmark fleet, as Spring Cloud Alibaba's Nacos discovery produces it: real
	 * {@code NacosServiceInstance}s from
	 * {@link NacosServiceDiscovery#hostToServiceInstance}, so their metadata holds
	 * {@code nacos.weight} (e.g. {@code "3.0"}), {@code nacos.cluster},
	 * {@code nacos.healthy}, {@code nacos.instanceId}, {@code nacos.ephemeral} plus the
	 * instance's own metadata:
	 * <ul>
	 * <li>{@code weight}: the same weight as an integer (what Spring's
	 * {@code WeightedServiceInstanceListSupplier} reads);</li>
	 * <li>cluster / {@code zone}: {@code a} for even indexes, {@code b} for odd
	 * ones;</li>
	 * <li>{@code version=v2} on 20 % of the instances (indexes ending in 0 or 1), the
	 * others untagged;</li>
	 * <li>{@code atlas.registered-at} one hour ago on even indexes (warm), absent on odd
	 * ones (warm too: they are in the first list the caller sees).</li>
	 * </ul>
	 * @param count number of instances
	 * @param nowMillis wall-clock time used for {@code atlas.registered-at}
	 * @return a new mutable {@link ArrayList}, like the one Spring's discovery supplier
	 * emits
	 */
	public static List<ServiceInstance> fleet(int count, long nowMillis) {
		List<ServiceInstance> fleet = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			String cluster = (i % 2 == 0) ? "a" : "b";
			Map<String, String> metadata = new HashMap<>();
			metadata.put("weight", Integer.toString(weight(i)));
			metadata.put("zone", cluster);
			if (i % 10 < 2) {
				metadata.put("version", CANARY_TAG);
			}
			if (i % 2 == 0) {
				metadata.put("atlas.registered-at", Long.toString(nowMillis - 3_600_000L));
			}
			fleet.add(nacosInstance(i, weight(i), cluster, metadata));
		}
		return fleet;
	}

	/**
	 * One instance as Spring Cloud Alibaba's discovery turns a Nacos {@link Instance}
	 * into a {@code ServiceInstance}.
	 * @param i index, gives the address {@code 10.x.y.z:8080}
	 * @param weight the Nacos weight
	 * @param cluster the Nacos cluster name
	 * @param metadata the instance's own metadata
	 * @return a {@code NacosServiceInstance}
	 */
	public static ServiceInstance nacosInstance(int i, double weight, String cluster, Map<String, String> metadata) {
		Instance instance = new Instance();
		String ip = "10." + ((i >> 16) & 0xff) + '.' + ((i >> 8) & 0xff) + '.' + (i & 0xff);
		instance.setInstanceId(ip + "#8080#" + cluster + "#DEFAULT_GROUP@@" + SERVICE_ID);
		instance.setIp(ip);
		instance.setPort(8080);
		instance.setWeight(weight);
		instance.setHealthy(true);
		instance.setEnabled(true);
		instance.setEphemeral(true);
		instance.setClusterName(cluster);
		instance.setServiceName("DEFAULT_GROUP@@" + SERVICE_ID);
		instance.setMetadata(new HashMap<>(metadata));
		return Objects.requireNonNull(NacosServiceDiscovery.hostToServiceInstance(instance, SERVICE_ID));
	}

	/**
	 * A load-balancing request as Spring Cloud's {@code @LoadBalanced} clients build it.
	 * @param wantedTag value of {@value #TAG_HEADER}, or {@code null} for none
	 * @return a {@code Request<RequestDataContext>}
	 */
	public static Request<RequestDataContext> request(@Nullable String wantedTag) {
		return request(wantedTag, null);
	}

	/**
	 * A GET of {@code /users/42} with a gray tag and a user id.
	 * @param wantedTag value of {@value #TAG_HEADER}, or {@code null} for none
	 * @param userId value of {@value #USER_HEADER}, or {@code null} for none
	 * @return a {@code Request<RequestDataContext>}
	 */
	public static Request<RequestDataContext> request(@Nullable String wantedTag, @Nullable String userId) {
		return request(wantedTag, userId, null, null);
	}

	/**
	 * A GET of {@code /users/42} with a gray tag, a user id and one more header.
	 * @param wantedTag value of {@value #TAG_HEADER}, or {@code null} for none
	 * @param userId value of {@value #USER_HEADER}, or {@code null} for none
	 * @param header another header's name, or {@code null} for none
	 * @param value its value
	 * @return a {@code Request<RequestDataContext>}
	 */
	public static Request<RequestDataContext> request(@Nullable String wantedTag, @Nullable String userId,
			@Nullable String header, @Nullable String value) {
		HttpHeaders headers = new HttpHeaders();
		if (header != null) {
			headers.add(header, value);
		}
		headers.add(HttpHeaders.ACCEPT, "application/json");
		if (wantedTag != null) {
			headers.add(TAG_HEADER, wantedTag);
		}
		if (userId != null) {
			headers.add(USER_HEADER, userId);
		}
		RequestData data = new RequestData(HttpMethod.GET, URI.create("http://" + SERVICE_ID + "/users/42"), headers,
				new LinkedMultiValueMap<>(), new HashMap<>());
		return new DefaultRequest<>(new RequestDataContext(data, "default"));
	}

	/**
	 * A {@code NacosLoadBalancer} as {@code NacosLoadBalancerClientConfiguration} builds
	 * it with {@code spring.cloud.loadbalancer.nacos.enabled=true}: the default algorithm
	 * (Nacos's weighted random), no instance filter, and {@code init()} called as the
	 * container would ({@code @PostConstruct}). The caller's cluster is
	 * {@code clusterName}; its own address is an IPv4 one without an {@code IPv6}
	 * metadata entry, so Nacos keeps IPv4 instances, as on a typical IPv4 host.
	 * @param suppliers the supplier chain
	 * @param clusterName {@code spring.cloud.nacos.discovery.cluster-name}
	 * @return the load balancer
	 */
	public static NacosLoadBalancer nacosLoadBalancer(ObjectProvider<ServiceInstanceListSupplier> suppliers,
			String clusterName) {
		NacosDiscoveryProperties properties = new NacosDiscoveryProperties();
		properties.setClusterName(clusterName);
		properties.setIp("10.255.0.1");
		Map<String, LoadBalancerAlgorithm> algorithms = new HashMap<>();
		algorithms.put(LoadBalancerAlgorithm.DEFAULT_SERVICE_ID, new DefaultLoadBalancerAlgorithm());
		NacosLoadBalancer loadBalancer = new NacosLoadBalancer(suppliers, SERVICE_ID, properties,
				new InetIPv6Utils(new InetUtilsProperties()), List.of(), algorithms);
		loadBalancer.init();
		return loadBalancer;
	}

	/**
	 * A supplier that emits one list object, again and again, from one {@link Flux}
	 * object, as Spring Cloud LoadBalancer's caching supplier does between two refreshes.
	 */
	public static final class FixedListSupplier implements ServiceInstanceListSupplier {

		private final Flux<List<ServiceInstance>> flux;

		/**
		 * @param instances the list to emit; never copied
		 */
		public FixedListSupplier(List<ServiceInstance> instances) {
			this.flux = Flux.just(instances);
		}

		@Override
		public String getServiceId() {
			return SERVICE_ID;
		}

		@Override
		public Flux<List<ServiceInstance>> get() {
			return this.flux;
		}

	}

	/**
	 * An {@link ObjectProvider} that hands out one object, without a bean factory lookup
	 * (the same for every load balancer measured, so the comparison is about the load
	 * balancers).
	 *
	 * @param <T> the type
	 */
	public static final class Just<T> implements ObjectProvider<T> {

		private final T object;

		/**
		 * @param object what to hand out
		 */
		public Just(T object) {
			this.object = object;
		}

		@Override
		public T getObject() {
			return this.object;
		}

		@Override
		public T getObject(Object... args) {
			return this.object;
		}

		@Override
		public T getIfAvailable() {
			return this.object;
		}

		@Override
		public T getIfAvailable(Supplier<T> defaultSupplier) {
			return this.object;
		}

		@Override
		public T getIfUnique() {
			return this.object;
		}

		@Override
		public T getIfUnique(Supplier<T> defaultSupplier) {
			return this.object;
		}

	}

}
