package dev.atlas.autoconfigure.loadbalancer;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.atlas.autoconfigure.settings.AtlasSettings;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.concurrent.ConcurrentTaskScheduler;

/**
 * Makes sure per-service settings are never silently ignored.
 * <ul>
 * <li>At startup: one WARN per property under {@code atlas.services} that binds to
 * nothing because its service id has a dot and is not written in brackets
 * ({@code atlas.services.user.service.loadbalancer.strategy} instead of
 * {@code atlas.services[user.service].loadbalancer.strategy}).</li>
 * <li>{@link #GRACE} after the first service is called (its load-balancer context is
 * created): one WARN per configured key ({@code atlas.services.<key>}) that
 * {@link AtlasSettings#matches(String, String) matches} none of the services called so
 * far. Checked once: a key first matched later is not reported again (its settings do
 * apply from then on).</li>
 * </ul>
 * Time and the one delayed check come from an injected {@link Clock} and
 * {@link TaskScheduler}. Thread-safe.
 */
final class ServiceKeyAudit implements DisposableBean {

	/**
	 * How long after the first call of any service the configured keys are checked: long
	 * enough for a freshly started application's first requests to reach the services it
	 * calls, short enough to show up while someone watches a new deployment.
	 */
	static final Duration GRACE = Duration.ofMinutes(2);

	private static final Logger log = LoggerFactory.getLogger(ServiceKeyAudit.class);

	private static final ConfigurationPropertyName SERVICES = ConfigurationPropertyName
		.of(AtlasSettings.PREFIX + ".services");

	private final AtlasSettings settings;

	private final TaskScheduler scheduler;

	private final Clock clock;

	private final Duration grace;

	private final @Nullable ScheduledExecutorService ownExecutor;

	private final Set<String> called = ConcurrentHashMap.newKeySet();

	private final AtomicBoolean scheduled = new AtomicBoolean();

	private final AtomicBoolean checked = new AtomicBoolean();

	/**
	 * Creates the audit with its own scheduler: one daemon thread, started only when
	 * there are configured keys and a service is called, ended after the check and on
	 * {@link #destroy()}.
	 * @param settings the configured keys
	 * @param environment scanned at once for properties that bind to nothing
	 */
	ServiceKeyAudit(AtlasSettings settings, Environment environment) {
		this(settings, environment, Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "atlas-settings-audit");
			thread.setDaemon(true);
			return thread;
		}));
	}

	private ServiceKeyAudit(AtlasSettings settings, Environment environment, ScheduledExecutorService executor) {
		this(settings, environment, new ConcurrentTaskScheduler(executor), Clock.systemUTC(), GRACE, executor);
	}

	/**
	 * Creates the audit.
	 * @param settings the configured keys
	 * @param environment scanned at once for properties that bind to nothing
	 * @param scheduler runs the one delayed check
	 * @param clock when the grace period starts
	 * @param grace how long after the first call the keys are checked
	 */
	ServiceKeyAudit(AtlasSettings settings, Environment environment, TaskScheduler scheduler, Clock clock,
			Duration grace) {
		this(settings, environment, scheduler, clock, grace, null);
	}

	private ServiceKeyAudit(AtlasSettings settings, Environment environment, TaskScheduler scheduler, Clock clock,
			Duration grace, @Nullable ScheduledExecutorService ownExecutor) {
		this.settings = settings;
		this.scheduler = scheduler;
		this.clock = clock;
		this.grace = grace;
		this.ownExecutor = ownExecutor;
		unbound(environment, Set.copyOf(settings.sectionNames())).forEach(log::warn);
	}

	/**
	 * Records that a service is called (its load-balancer context was created); the first
	 * call starts the grace period.
	 * @param serviceId the service id as the client calls it
	 */
	void called(String serviceId) {
		this.called.add(serviceId);
		if (!this.settings.configuredServiceIds().isEmpty() && this.scheduled.compareAndSet(false, true)) {
			this.scheduler.schedule(this::check, this.clock.instant().plus(this.grace));
		}
	}

	/**
	 * Logs one WARN per configured key that matches no service called so far; does
	 * nothing the second time.
	 */
	void check() {
		try {
			if (!this.checked.compareAndSet(false, true)) {
				return;
			}
			Set<String> calledIds = new TreeSet<>(this.called);
			for (String key : this.settings.configuredServiceIds()) {
				if (calledIds.stream().noneMatch((serviceId) -> AtlasSettings.matches(key, serviceId))) {
					log.warn("{}.* matches no service this application called in the {} s after its first "
							+ "load-balanced call (called: {}): these settings are not used. Service ids match "
							+ "ignoring case; an id with dots is written in brackets, atlas.services[my.service].*",
							this.settings.propertyPrefix(key), this.grace.toSeconds(), calledIds);
				}
			}
		}
		finally {
			if (this.ownExecutor != null) {
				this.ownExecutor.shutdown();
			}
		}
	}

	@Override
	public void destroy() {
		if (this.ownExecutor != null) {
			this.ownExecutor.shutdownNow();
		}
	}

	/**
	 * The warnings about properties under {@code atlas.services} that bind to nothing:
	 * the element after the service id is not a section (what an unbracketed id with dots
	 * gives).
	 * @param environment the application's environment
	 * @param sections the names of the sections a service can have
	 * @return one message per property, in name order
	 */
	static List<String> unbound(Environment environment, Set<String> sections) {
		Set<String> names = new TreeSet<>();
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
			if (source instanceof IterableConfigurationPropertySource iterable) {
				iterable.filter(SERVICES::isAncestorOf).forEach((name) -> {
					if (name.getNumberOfElements() > 3 && !sections.contains(name.getElement(3, Form.UNIFORM))) {
						names.add(name.toString());
					}
				});
			}
		}
		List<String> warnings = new ArrayList<>();
		for (String text : names) {
			ConfigurationPropertyName name = ConfigurationPropertyName.of(text);
			warnings.add(text + " sets nothing: '" + name.getElement(3, Form.ORIGINAL)
					+ "' is not a section (loadbalancer, gray, warmup) of a service. A service id with dots is "
					+ "written in brackets" + bracketed(name, sections) + ".");
		}
		return warnings;
	}

	private static String bracketed(ConfigurationPropertyName name, Set<String> sections) {
		List<String> id = new ArrayList<>();
		for (int i = 2; i < name.getNumberOfElements(); i++) {
			if (i > 2 && sections.contains(name.getElement(i, Form.UNIFORM))) {
				String rest = name.subName(i).toString();
				return ", " + SERVICES + "[" + String.join(".", id) + "]." + rest;
			}
			id.add(name.getElement(i, Form.ORIGINAL));
		}
		return "";
	}

}
