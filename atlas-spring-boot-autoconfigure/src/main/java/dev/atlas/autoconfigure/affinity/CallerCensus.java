package dev.atlas.autoconfigure.affinity;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.instance.MetadataKeys;
import dev.atlas.loadbalancer.routing.AffinityMode;
import dev.atlas.loadbalancer.routing.CallerZones;
import dev.atlas.loadbalancer.support.OncePerKeyLog;
import dev.atlas.loadbalancer.support.Scheduler;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.core.env.Environment;

/**
 * How this application's callers are spread over the zones, for proportional cluster
 * affinity: the instances of this application's own service in the registry (the service
 * id of its {@link Registration} when it registers, else
 * {@code spring.application.name}), counted per zone (their {@code nacos.cluster} or
 * {@code zone} metadata, or pod label, read as for any service).
 *
 * <p>
 * Read from Spring Cloud's {@link DiscoveryClient} on Atlas's probe executor: first when
 * {@link #current()} is first asked (the first call in proportional mode), then every
 * {@code atlas.affinity.callers-refresh-interval} (10 s by default) until the application
 * closes (skipped while {@code atlas.affinity.mode} is not {@code proportional}); a
 * request never waits for it, and a read that fails keeps the last spread (one WARN per
 * kind of failure). A read blocks its probe thread for as long as the discovery client
 * takes (a local cache for Nacos and Eureka, a registry query for ZooKeeper, Consul or
 * Kubernetes). {@link #current()} gives a new object only when the counts change, so the
 * decisions memoized on it are recomputed only then. Without an own service name or a
 * {@code DiscoveryClient}, the spread stays unknown (proportional routing is off, the
 * threshold rules apply), said once at INFO; instances of the own service without zone
 * metadata are counted apart and said once at WARN. Thread-safe.
 *
 * @since 0.1.0
 */
public final class CallerCensus implements DisposableBean {

	/** The property naming this application's own service. */
	public static final String APPLICATION_NAME = "spring.application.name";

	private static final Logger log = LoggerFactory.getLogger(CallerCensus.class);

	private final AtlasSettings settings;

	private final Environment environment;

	private final ObjectProvider<DiscoveryClient> discovery;

	private final ObjectProvider<Registration> registration;

	private final Scheduler scheduler;

	private final AtomicBoolean started = new AtomicBoolean();

	private final OncePerKeyLog said = new OncePerKeyLog();

	private volatile @Nullable CallerZones current;

	private volatile boolean closed;

	private volatile @Nullable InstanceAttributesParser parser;

	private volatile @Nullable String parsed;

	/**
	 * Creates the census; reads nothing yet.
	 * @param settings the settings ({@code atlas.affinity.callers-refresh-interval})
	 * @param environment where {@code spring.application.name} is read (without a
	 * registration)
	 * @param discovery the application's discovery client (the primary one when there are
	 * several)
	 * @param registration this application's registration, if it registers (its service
	 * id names the own service)
	 * @param scheduler runs the reads
	 */
	public CallerCensus(AtlasSettings settings, Environment environment, ObjectProvider<DiscoveryClient> discovery,
			ObjectProvider<Registration> registration, Scheduler scheduler) {
		this.settings = settings;
		this.environment = environment;
		this.discovery = discovery;
		this.registration = registration;
		this.scheduler = scheduler;
	}

	/**
	 * The callers' spread as last read; the first call starts the reads.
	 * @return {@code null} until a read succeeded (and for good without an application
	 * name or a discovery client)
	 */
	public @Nullable CallerZones current() {
		if (!this.started.get() && this.started.compareAndSet(false, true)) {
			this.scheduler.schedule(this::refresh, 0);
		}
		return this.current;
	}

	/**
	 * Reads the spread now, then schedules the next read; what {@link #current()}'s reads
	 * run.
	 */
	void refresh() {
		if (this.closed) {
			return;
		}
		String name = ownService();
		DiscoveryClient client = (name != null) ? discoveryClient() : null;
		if (name == null || client == null) {
			this.said.once("unknown", (key) -> log.info(
					"Atlas cluster affinity: the callers' spread over the zones is unknown ({}); proportional zone "
							+ "routing is off and the threshold rules apply",
					(name != null) ? "no unique DiscoveryClient" : "no " + APPLICATION_NAME));
			return;
		}
		try {
			if (this.settings.caller(AffinitySection.CALLER).getMode() == AffinityMode.PROPORTIONAL) {
				read(name, client);
			}
		}
		catch (RuntimeException ex) {
			this.said.once("failed:" + ex.getClass().getName(),
					(key) -> log.warn("Atlas cluster affinity: could not read the instances of this application's "
							+ "own service '{}' (the last spread is kept): {}", name, ex.toString()));
		}
		finally {
			if (!this.closed) {
				this.scheduler.schedule(this::refresh,
						this.settings.caller(AffinitySection.CALLER).getCallersRefreshInterval().toMillis());
			}
		}
	}

	private void read(String name, DiscoveryClient client) {
		List<ServiceInstance> instances = client.getInstances(name);
		InstanceAttributesParser parser = parser(name);
		Map<String, Integer> perZone = new HashMap<>();
		int withoutZone = 0;
		for (ServiceInstance instance : instances) {
			String zone = parser.parse(instance).cluster();
			if (zone != null) {
				perZone.merge(zone, 1, Integer::sum);
			}
			else {
				withoutZone++;
			}
		}
		if (withoutZone > 0) {
			int count = withoutZone;
			this.said.once("without-zone",
					(key) -> log.warn("Atlas cluster affinity: {} of the {} instances of this application's own "
							+ "service '{}' have no zone metadata (nacos.cluster or zone); proportional zone routing "
							+ "does not count their demand in any zone", count, instances.size(), name));
		}
		CallerZones next = new CallerZones(perZone, withoutZone);
		if (!next.equals(this.current)) {
			this.current = next;
		}
	}

	private @Nullable String ownService() {
		try {
			Registration own = this.registration.getIfUnique();
			String id = (own != null) ? text(own.getServiceId()) : null;
			if (id != null) {
				return id;
			}
		}
		catch (RuntimeException ex) {
			// no unique registration: the application name applies
		}
		return text(this.environment.getProperty(APPLICATION_NAME));
	}

	private @Nullable DiscoveryClient discoveryClient() {
		try {
			return this.discovery.getIfUnique();
		}
		catch (RuntimeException ex) {
			return null;
		}
	}

	/** Only the refresh task calls this, one read at a time. */
	private InstanceAttributesParser parser(String name) {
		InstanceAttributesParser existing = this.parser;
		if (existing == null || !name.equals(this.parsed)) {
			// the own service is not a route: its malformed metadata is not counted in
			// meters (a registry without a backend)
			existing = new InstanceAttributesParser(name, MetadataKeys.DEFAULT_TAG, new CompositeMeterRegistry());
			this.parser = existing;
			this.parsed = name;
		}
		return existing;
	}

	/** Stops the reads. */
	@Override
	public void destroy() {
		this.closed = true;
	}

	private static @Nullable String text(@Nullable String value) {
		return (value != null && !value.isBlank()) ? value : null;
	}

}
