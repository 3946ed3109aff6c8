package dev.atlas.autoconfigure.affinity;

import java.util.Objects;

import dev.atlas.autoconfigure.runtime.ReloadListener;
import dev.atlas.autoconfigure.settings.AtlasSettings;
import dev.atlas.autoconfigure.settings.CallerSettings;
import dev.atlas.autoconfigure.settings.Reload;
import dev.atlas.loadbalancer.routing.AffinityRules;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.loadbalancer.config.LoadBalancerZoneConfig;
import org.springframework.core.env.Environment;

/**
 * This caller's own cluster, the one cluster affinity prefers, and the affinity rules
 * with it. The first of these that names a cluster wins:
 * <ol>
 * <li>{@code atlas.affinity.cluster};</li>
 * <li>{@code spring.cloud.nacos.discovery.cluster-name};</li>
 * <li>the zone of Spring Cloud's {@link LoadBalancerZoneConfig} bean, which Spring Cloud
 * LoadBalancer creates from {@code spring.cloud.loadbalancer.zone} and which registry
 * integrations fill in while the application starts (Spring Cloud Netflix's
 * {@code EurekaLoadBalancerClientConfiguration} sets it from
 * {@code eureka.instance.metadata-map.zone} when each load-balancer context is created,
 * if it is still empty); a zone that a registry integration only puts there as its
 * default ({@link PlaceholderZone}: Eureka's {@code defaultZone}) counts as none;</li>
 * <li>{@code spring.cloud.loadbalancer.zone}, when there is no such bean (or several
 * without a primary one: then none is used, and nothing throws).</li>
 * </ol>
 * The rules are resolved once, at the first request of any service (after that service's
 * load-balancer context, with the registry integration's configuration in it, is
 * created), and kept: a zone set on the bean after that is not seen. When the cluster
 * comes from the bean, one INFO line says so.
 *
 * <p>
 * On a runtime change ({@link ReloadListener}) the rules are resolved again by the same
 * precedence once the caller-level settings are valid ({@link #nextRules()} gives them to
 * each service's affinity filter meanwhile), and kept once every service took them, if
 * they were resolved before (before the first request they stay unresolved: a registry
 * integration may still set the zone).
 *
 * <p>
 * Thread-safe: the first resolution is synchronized, every later call reads a volatile
 * field ({@link dev.atlas.loadbalancer.routing.ClusterAffinity} keeps the rules itself,
 * so a request does not even do that).
 *
 * @since 0.1.0
 */
public final class CallerCluster implements ReloadListener {

	/** The property holding this application's Nacos cluster name. */
	public static final String NACOS_CLUSTER = "spring.cloud.nacos.discovery.cluster-name";

	/** The property holding this application's zone for Spring Cloud LoadBalancer. */
	public static final String LOADBALANCER_ZONE = "spring.cloud.loadbalancer.zone";

	private static final Logger log = LoggerFactory.getLogger(CallerCluster.class);

	private final AtlasSettings settings;

	private final Environment environment;

	private final ObjectProvider<LoadBalancerZoneConfig> zoneConfig;

	private final ObjectProvider<PlaceholderZone> placeholders;

	private volatile @Nullable AffinityRules rules;

	/** The rules of a runtime change being applied, until it is. */
	private volatile @Nullable AffinityRules pending;

	/**
	 * Creates the caller's cluster; reads nothing yet.
	 * @param settings the settings ({@code atlas.affinity.*} in force)
	 * @param environment where the Nacos cluster name and the load-balancer zone are read
	 * @param zoneConfig the zone bean of Spring Cloud, if any
	 * @param placeholders the registry integrations' placeholder zones, which count as no
	 * zone when the bean holds one
	 */
	public CallerCluster(AtlasSettings settings, Environment environment,
			ObjectProvider<LoadBalancerZoneConfig> zoneConfig, ObjectProvider<PlaceholderZone> placeholders) {
		this.settings = settings;
		this.environment = environment;
		this.zoneConfig = zoneConfig;
		this.placeholders = placeholders;
	}

	/**
	 * The affinity rules of this caller, resolved at the first call and kept.
	 * @return without a cluster (affinity off) when disabled or when nothing names one
	 */
	public AffinityRules rules() {
		AffinityRules resolved = this.rules;
		if (resolved == null) {
			synchronized (this) {
				resolved = this.rules;
				if (resolved == null) {
					resolved = resolve();
					this.rules = resolved;
				}
			}
		}
		return resolved;
	}

	/**
	 * Whether the rules are known (the first call resolved them).
	 * @return {@code false} before the first call
	 */
	public boolean isResolved() {
		return this.rules != null;
	}

	/**
	 * The affinity rules as the settings in force give them now (after a runtime change),
	 * by the same precedence; not kept: {@link #put} them once every service took them.
	 * @return the rules
	 * @throws IllegalArgumentException naming the property when a threshold is out of
	 * range
	 */
	public AffinityRules resolveNow() {
		return resolution().rules();
	}

	/**
	 * Puts rules in force for the services whose load-balancer context is created from
	 * now on.
	 * @param rules rules from {@link #resolveNow()}
	 */
	synchronized void put(AffinityRules rules) {
		this.rules = rules;
	}

	/**
	 * The rules a service's affinity filter should hold now: those of the runtime change
	 * being applied, else those resolved at the first request.
	 * @return {@code null} before the first request when no change is being applied (the
	 * filter then resolves them at its first request)
	 */
	public @Nullable AffinityRules nextRules() {
		AffinityRules next = this.pending;
		return (next != null) ? next : this.rules;
	}

	@Override
	public void callerChanged(CallerSettings caller) {
		this.pending = resolveNow();
	}

	@Override
	public void changed(Reload reload) {
		AffinityRules next = this.pending;
		if (next != null && isResolved()) {
			// Before the first request, the rules stay unresolved: a registry integration
			// may still set the zone.
			put(next);
		}
		this.pending = null;
	}

	/**
	 * The affinity rules of this caller by the settings in force, the same for every
	 * service it calls, with {@code atlas.affinity.enabled} as at startup (it is read
	 * only then).
	 * @param defaultCluster the cluster to use when {@code atlas.affinity.cluster} is not
	 * set, may be {@code null}
	 * @return without a cluster (affinity off) when disabled or when there is none
	 * @throws IllegalArgumentException naming the property when a threshold is out of
	 * range
	 */
	public AffinityRules affinity(@Nullable String defaultCluster) {
		AffinityProperties current = this.settings.caller(AffinitySection.CALLER);
		boolean enabled = this.settings.atStartup(AffinitySection.CALLER).isEnabled();
		if (current.isEnabled() == enabled) {
			return current.toRules(defaultCluster);
		}
		AffinityProperties asAtStartup = new AffinityProperties();
		asAtStartup.setEnabled(enabled);
		asAtStartup.setCluster(current.getCluster());
		asAtStartup.setMinHealthyRatio(current.getMinHealthyRatio());
		asAtStartup.setMinInstances(current.getMinInstances());
		asAtStartup.setMode(current.getMode());
		asAtStartup.setMinClusterSize(current.getMinClusterSize());
		asAtStartup.setCallersRefreshInterval(current.getCallersRefreshInterval());
		return asAtStartup.toRules(defaultCluster);
	}

	private AffinityRules resolve() {
		Resolution resolution = resolution();
		if (resolution.placeholder() != null) {
			log.info("Atlas cluster affinity: off: the zone '{}' of Spring Cloud's LoadBalancerZoneConfig is the "
					+ "registry's default, not a zone this application configured (no atlas.affinity.cluster, {} "
					+ "or zone is set)", resolution.placeholder(), NACOS_CLUSTER);
		}
		if (resolution.fromBean() && resolution.rules().cluster() != null) {
			log.info(
					"Atlas cluster affinity: this caller's cluster is '{}', the zone of Spring Cloud's "
							+ "LoadBalancerZoneConfig (no atlas.affinity.cluster or {} is set)",
					resolution.rules().cluster(), NACOS_CLUSTER);
		}
		return resolution.rules();
	}

	/**
	 * What the startup line says about affinity; reads the zone bean without keeping what
	 * it holds (a registry integration may still set it before the first call).
	 * @return e.g. {@code cluster 'a'}
	 */
	public String describe() {
		AffinityRules known = this.rules;
		if (known != null) {
			return describe(known);
		}
		Resolution resolution = resolution();
		if (!resolution.fromBean()) {
			return describe(resolution.rules());
		}
		if (resolution.rules().cluster() == null) {
			return "off unless a registry integration sets the zone of LoadBalancerZoneConfig before the first call";
		}
		String described = describe(resolution.rules());
		return Objects.equals(resolution.zone(), text(this.environment.getProperty(LOADBALANCER_ZONE))) ? described
				: described + " (zone of LoadBalancerZoneConfig, read at the first call)";
	}

	/**
	 * The precedence of the class comment, the one place it is decided ({@link #rules()}
	 * keeps the result, {@link #describe()} shows it).
	 */
	private Resolution resolution() {
		String named = namedByProperty();
		if (named != null || !this.settings.atStartup(AffinitySection.CALLER).isEnabled()) {
			return new Resolution(affinity(named), named, false, null);
		}
		LoadBalancerZoneConfig bean = zoneBean();
		if (bean == null) {
			String zone = text(this.environment.getProperty(LOADBALANCER_ZONE));
			return new Resolution(affinity(zone), zone, false, null);
		}
		String zone = text(bean.getZone());
		if (zone != null
				&& this.placeholders.orderedStream().anyMatch((placeholder) -> placeholder.isPlaceholder(zone))) {
			return new Resolution(affinity(null), null, true, zone);
		}
		return new Resolution(affinity(zone), zone, true, null);
	}

	/**
	 * The zone bean when there is exactly one (or a primary one); never throws, so that
	 * no request fails here (several beans without a primary one, or one that cannot be
	 * created, count as none: {@code spring.cloud.loadbalancer.zone} applies).
	 */
	private @Nullable LoadBalancerZoneConfig zoneBean() {
		try {
			return this.zoneConfig.getIfUnique();
		}
		catch (RuntimeException ex) {
			log.warn("Atlas cluster affinity: could not get Spring Cloud's LoadBalancerZoneConfig bean, so {} "
					+ "applies: {}", LOADBALANCER_ZONE, ex.toString());
			return null;
		}
	}

	/**
	 * @param placeholder the bean's zone when it was a registry's placeholder (then
	 * {@code zone} is {@code null})
	 */
	private record Resolution(AffinityRules rules, @Nullable String zone, boolean fromBean,
			@Nullable String placeholder) {
	}

	private static String describe(AffinityRules rules) {
		return (rules.cluster() != null) ? "cluster '" + rules.cluster() + "'" : "off (no cluster)";
	}

	/**
	 * {@code atlas.affinity.cluster}, else the Nacos cluster name; {@code null} if
	 * neither.
	 */
	private @Nullable String namedByProperty() {
		String own = text(this.settings.caller(AffinitySection.CALLER).getCluster());
		return (own != null) ? own : text(this.environment.getProperty(NACOS_CLUSTER));
	}

	private static @Nullable String text(@Nullable String value) {
		return (value != null && !value.isBlank()) ? value : null;
	}

}
