package dev.atlas.autoconfigure.orca;

import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Predicate;

import dev.atlas.loadbalancer.orca.ReportedLoad;
import dev.atlas.loadbalancer.orca.WeightRules;
import dev.atlas.loadbalancer.support.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * The reported load of each service this application calls, shared by the service's
 * request lifecycle (which feeds it) and its {@code weighted-round-robin} strategy (which
 * reads it), and whether a service's calls ask for reports: when its strategy is
 * {@code weighted-round-robin}. One entry per service called; thread-safe.
 *
 * @since 0.1.0
 */
public class ReportedLoads {

	private final ConcurrentHashMap<String, ReportedLoad> loads = new ConcurrentHashMap<>();

	private final Predicate<String> wanted;

	private final Function<String, ReportedLoad> create;

	/**
	 * Creates the registry.
	 * @param rules the rules in force of a service, by service id (lower case), read at
	 * each recomputation of its weights
	 * @param wanted whether a service's current strategy is {@code weighted-round-robin}
	 * (a lookup in the resolved settings: cheap)
	 * @param scheduler runs the recomputations of the weights
	 */
	public ReportedLoads(Function<String, WeightRules> rules, Predicate<String> wanted, Scheduler scheduler) {
		Objects.requireNonNull(rules, "rules");
		Objects.requireNonNull(scheduler, "scheduler");
		this.wanted = Objects.requireNonNull(wanted, "wanted");
		this.create = (serviceId) -> new ReportedLoad(() -> rules.apply(serviceId), scheduler, System::nanoTime);
	}

	/**
	 * The reported load of a service, created at the first call.
	 * @param serviceId the service
	 * @return its reported load
	 */
	public ReportedLoad of(String serviceId) {
		return this.loads.computeIfAbsent(normalized(serviceId), this.create);
	}

	/**
	 * Service ids compared as the registries and Atlas's settings do, without case: a
	 * gateway's answer names Eureka's {@code USER-SERVICE} where its route says
	 * {@code lb://user-service}.
	 */
	private static String normalized(String serviceId) {
		return serviceId.toLowerCase(Locale.ROOT);
	}

	/**
	 * Whether calls to a service ask for load reports, and their answers are read.
	 * @param serviceId the service, {@code null} for none
	 * @return {@code true} when its strategy in force is {@code weighted-round-robin}
	 */
	public boolean wanted(@Nullable String serviceId) {
		return serviceId != null && this.wanted.test(normalized(serviceId));
	}

}
