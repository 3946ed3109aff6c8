package dev.atlas.autoconfigure.client;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

import dev.atlas.loadbalancer.instance.BracketedHost;
import dev.atlas.loadbalancer.instance.InstanceKey;
import dev.atlas.loadbalancer.support.CallbackFailures;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.ResponseData;
import org.springframework.cloud.client.loadbalancer.TimedRequestContext;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.loadbalancer.stats.MicrometerStatsLoadBalancerLifecycle;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatusCode;

/**
 * Spring Cloud LoadBalancer's {@code loadbalancer.requests.*} meters (the names, tags and
 * values of {@link MicrometerStatsLoadBalancerLifecycle}, which this subclass replaces
 * without calling it), with their number following the instances in use and the routes,
 * not the requests or the history:
 * <ul>
 * <li>one {@code loadbalancer.requests.active} gauge per instance identity (service id,
 * instance id, host and port): the registry's new object for an instance after a weight
 * or metadata change (Nacos's and {@code DefaultServiceInstance}'s {@code equals} include
 * the metadata) counts on the same gauge;</li>
 * <li>an instance's series (its gauge and its timers) are removed from the registry once
 * it has had no request in flight and none started for an {@linkplain #IDLE_WINDOW idle
 * window} (a check every window, at the first completion of any instance's request after
 * it, so 5 to 10 min after its last request while the application calls any service): an
 * instance that left the registry leaves no meter behind;</li>
 * <li>the {@code uri} tag is the URI template where the client hands one to Spring Cloud
 * (RestClient's and WebClient's {@code uriTemplate} attribute) and it has a variable,
 * else {@code UNKNOWN}: never the request's path, which makes one series per user id
 * (Feign, RestTemplate, the gateway, or a URI built by string concatenation).
 * {@code spring.cloud.loadbalancer.stats.include-path=false} makes it {@code UNKNOWN}
 * always;</li>
 * <li>no callback throws: a failure inside one (Spring Cloud's threw a
 * {@code NullPointerException} for a failed request without a chosen instance, which hid
 * the request's own failure) is logged at WARN once per kind of failure (then at DEBUG)
 * and the request goes on.</li>
 * </ul>
 * Thread-safe; a tracked instance's request allocates its look-up key and, at completion,
 * its timer's key.
 */
class LoadBalancerRequestMeters extends MicrometerStatsLoadBalancerLifecycle {

	/** How long an instance's meters stay without a request: 5 min. */
	static final Duration IDLE_WINDOW = Duration.ofMinutes(5);

	static final String UNKNOWN = "UNKNOWN";

	private static final Logger logger = LoggerFactory.getLogger(LoadBalancerRequestMeters.class);

	private static final String[] URI_TEMPLATE_ATTRIBUTES = { "org.springframework.web.client.RestClient.uriTemplate",
			"org.springframework.web.reactive.function.client.WebClient.uriTemplate" };

	private final MeterRegistry meterRegistry;

	private final ReactiveLoadBalancer.Factory<ServiceInstance> loadBalancerFactory;

	private final LongSupplier nanoTicker;

	private final long idleWindowNanos;

	private final ConcurrentHashMap<SeriesKey, Series> byInstance = new ConcurrentHashMap<>();

	private final ReentrantLock sweeping = new ReentrantLock();

	private volatile long nextSweepNanos;

	/**
	 * @param meterRegistry where the meters are registered
	 * @param loadBalancerFactory the services' load-balancer properties (whether the
	 * {@code uri} tag is wanted)
	 */
	LoadBalancerRequestMeters(MeterRegistry meterRegistry,
			ReactiveLoadBalancer.Factory<ServiceInstance> loadBalancerFactory) {
		this(meterRegistry, loadBalancerFactory, System::nanoTime, IDLE_WINDOW);
	}

	/**
	 * @param meterRegistry where the meters are registered
	 * @param loadBalancerFactory the services' load-balancer properties
	 * @param nanoTicker the time in ns of the idle window, only compared with itself
	 * (requests are timed on {@link System#nanoTime()}, as Spring Cloud's clients read
	 * the start time it stores in the request)
	 * @param idleWindow how long an instance's meters stay without a request, positive
	 */
	LoadBalancerRequestMeters(MeterRegistry meterRegistry,
			ReactiveLoadBalancer.Factory<ServiceInstance> loadBalancerFactory, LongSupplier nanoTicker,
			Duration idleWindow) {
		super(meterRegistry, loadBalancerFactory);
		this.meterRegistry = meterRegistry;
		this.loadBalancerFactory = loadBalancerFactory;
		this.nanoTicker = nanoTicker;
		this.idleWindowNanos = idleWindow.toNanos();
		this.nextSweepNanos = nanoTicker.getAsLong() + this.idleWindowNanos;
	}

	@Override
	public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
		try {
			if (request != null && request.getContext() instanceof TimedRequestContext timed) {
				timed.setRequestStartTime(System.nanoTime());
			}
			ServiceInstance instance = BracketedHost.chosen(lbResponse);
			if (instance == null) {
				return;
			}
			while (true) {
				Series series = series(instance);
				series.active.incrementAndGet();
				if (!series.retired) {
					series.started.increment();
					return;
				}
				// Being removed meanwhile: count it on the instance's fresh series.
				series.active.decrementAndGet();
			}
		}
		catch (RuntimeException ex) {
			CallbackFailures.swallowed(logger, "loadbalancer.requests meters: onStartRequest", ex);
		}
	}

	@Override
	public void onComplete(CompletionContext<Object, ServiceInstance, Object> completionContext) {
		try {
			complete(completionContext);
		}
		catch (RuntimeException ex) {
			CallbackFailures.swallowed(logger, "loadbalancer.requests meters: onComplete", ex);
		}
	}

	/**
	 * Instances with meters (tests).
	 * @return {@code >= 0}
	 */
	int trackedInstances() {
		return this.byInstance.size();
	}

	/**
	 * Ends the current idle window now (tests on real applications, which cannot wait for
	 * it): the next completion sweeps.
	 */
	void moveIdleWindowOn() {
		this.nextSweepNanos = this.nanoTicker.getAsLong() - 1;
	}

	private void complete(CompletionContext<Object, ServiceInstance, Object> completion) {
		long finished = System.nanoTime();
		Response<ServiceInstance> response = completion.getLoadBalancerResponse();
		ServiceInstance instance = BracketedHost.chosen(response);
		Request<Object> request = completion.getLoadBalancerRequest();
		RequestData requestData = (request != null && request.getContext() instanceof RequestDataContext context)
				? context.getClientRequest() : null;
		boolean includePath = this.loadBalancerFactory
			.getProperties((instance != null) ? instance.getServiceId() : null)
			.getStats()
			.isIncludePath();
		if (completion.status() == CompletionContext.Status.DISCARD) {
			Counter.builder("loadbalancer.requests.discard")
				.tags(Tags.of(Tag.of("method", method(requestData)), Tag.of("uri", uri(requestData, includePath)),
						Tag.of("serviceId", host(requestData))))
				.register(this.meterRegistry)
				.increment();
			return;
		}
		if (instance != null) {
			Series series = series(instance);
			series.active.getAndUpdate((n) -> Math.max(0, n - 1));
			if (request != null && request.getContext() instanceof TimedRequestContext timed
					&& timed.getRequestStartTime() != 0L) {
				series.record(timerKey(completion, requestData, includePath), finished - timed.getRequestStartTime());
			}
		}
		long now = this.nanoTicker.getAsLong();
		if (now - this.nextSweepNanos >= 0) {
			sweep(now);
		}
	}

	private TimerKey timerKey(CompletionContext<Object, ServiceInstance, Object> completion,
			@Nullable RequestData requestData, boolean includePath) {
		if (completion.status() == CompletionContext.Status.FAILED) {
			Throwable failure = completion.getThrowable();
			String exception = "None";
			if (failure != null) {
				String simpleName = failure.getClass().getSimpleName();
				exception = simpleName.isEmpty() ? failure.getClass().getName() : simpleName;
			}
			return new TimerKey(true, method(requestData), uri(requestData, includePath), exception, "");
		}
		if (!(completion.getClientResponse() instanceof ResponseData responseData)) {
			return new TimerKey(false, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN);
		}
		RequestData answered = responseData.getRequestData();
		HttpStatusCode status = responseData.getHttpStatus();
		// As Spring Cloud (and the actuator): an answer without a status is a 200.
		int code = (status != null) ? status.value() : 200;
		return new TimerKey(false, method(answered), uri(answered, includePath), outcome(code), Integer.toString(code));
	}

	private Series series(ServiceInstance instance) {
		SeriesKey key = new SeriesKey(instance.getServiceId(), InstanceKey.of(instance));
		Series series = this.byInstance.get(key);
		if (series == null || series.retired) {
			series = this.byInstance.compute(key, (k, existing) -> (existing != null && !existing.retired) ? existing
					: new Series(k, instance, this.meterRegistry));
		}
		return series;
	}

	/** Removes the series of every instance idle since the previous sweep. */
	private void sweep(long now) {
		if (!this.sweeping.tryLock()) {
			return;
		}
		try {
			if (now - this.nextSweepNanos < 0) {
				return;
			}
			this.nextSweepNanos = now + this.idleWindowNanos;
			for (SeriesKey key : this.byInstance.keySet()) {
				this.byInstance.computeIfPresent(key, (k, series) -> {
					if (series.retireIfIdle()) {
						// Under the map's lock of the key: a request that wants a fresh
						// series for the instance waits until the old meters are gone, so
						// that it registers new ones rather than getting these back from
						// the registry.
						series.remove();
						return null;
					}
					return series;
				});
			}
		}
		finally {
			this.sweeping.unlock();
		}
	}

	private static String method(@Nullable RequestData requestData) {
		HttpMethod method = (requestData != null) ? requestData.getHttpMethod() : null;
		return (method != null) ? method.name() : UNKNOWN;
	}

	private static String uri(@Nullable RequestData requestData, boolean includePath) {
		if (!includePath || requestData == null) {
			return UNKNOWN;
		}
		Map<String, Object> attributes = requestData.getAttributes();
		if (attributes != null) {
			for (String name : URI_TEMPLATE_ATTRIBUTES) {
				// A "template" without a variable is a URI the application built itself
				// (uri("…/users/" + id)): as unbounded as the path.
				if (attributes.get(name) instanceof String template && template.indexOf('{') >= 0) {
					return template;
				}
			}
		}
		return UNKNOWN;
	}

	private static String host(@Nullable RequestData requestData) {
		String host = (requestData != null && requestData.getUrl() != null) ? requestData.getUrl().getHost() : null;
		return (host != null) ? host : UNKNOWN;
	}

	/** Spring Boot actuator's {@code Outcome} of a status. */
	private static String outcome(int status) {
		if (status >= 100 && status < 600) {
			return switch (status / 100) {
				case 1 -> "INFORMATIONAL";
				case 2 -> "SUCCESS";
				case 3 -> "REDIRECTION";
				case 4 -> "CLIENT_ERROR";
				default -> "SERVER_ERROR";
			};
		}
		return UNKNOWN;
	}

	/** An instance identity: what the gauge's and timers' instance tags say. */
	private record SeriesKey(@Nullable String serviceId, InstanceKey instance) {
	}

	/**
	 * One timer series of an instance: failed (with the exception) or not (with the
	 * outcome and status).
	 */
	private record TimerKey(boolean failed, String method, String uri, String outcomeOrException, String status) {
	}

	/** One instance's gauge and timers. */
	private static final class Series {

		private final Tags instanceTags;

		private final AtomicLong active = new AtomicLong();

		private final LongAdder started = new LongAdder();

		private final Gauge gauge;

		private final ConcurrentHashMap<TimerKey, Timer> timers = new ConcurrentHashMap<>();

		private final MeterRegistry registry;

		private long startedAtLastSweep;

		private volatile boolean retired;

		Series(SeriesKey key, ServiceInstance instance, MeterRegistry registry) {
			this.registry = registry;
			this.instanceTags = Tags.of(Tag.of("serviceId", orUnknown(key.serviceId())),
					Tag.of("serviceInstance.instanceId", orUnknown(instance.getInstanceId())),
					Tag.of("serviceInstance.host", orUnknown(instance.getHost())),
					Tag.of("serviceInstance.port", String.valueOf(instance.getPort())));
			this.gauge = Gauge.builder("loadbalancer.requests.active", this.active, AtomicLong::get)
				.tags(this.instanceTags)
				.register(registry);
		}

		void record(TimerKey key, long nanos) {
			Timer timer = this.timers.get(key);
			if (timer == null) {
				if (this.retired) {
					// Removed meanwhile (a completion without a start racing with its
					// instance's idle removal): the sample is dropped rather than a timer
					// registered that no series would remove.
					return;
				}
				timer = this.timers.computeIfAbsent(key, this::register);
			}
			timer.record(nanos, TimeUnit.NANOSECONDS);
		}

		private Timer register(TimerKey key) {
			Tags tags = this.instanceTags.and(Tag.of("method", key.method()), Tag.of("uri", key.uri()));
			if (key.failed()) {
				return Timer.builder("loadbalancer.requests.failed")
					.tags(tags.and(Tag.of("exception", key.outcomeOrException())))
					.register(this.registry);
			}
			return Timer.builder("loadbalancer.requests.success")
				.tags(tags.and(Tag.of("outcome", key.outcomeOrException()), Tag.of("status", key.status())))
				.register(this.registry);
		}

		/**
		 * Marks this series retired when nothing is in flight and nothing started since
		 * the previous sweep (then no request finds it again). Runs under the map's lock
		 * of its key.
		 */
		boolean retireIfIdle() {
			long count = this.started.sum();
			if (count != this.startedAtLastSweep || this.active.get() != 0) {
				this.startedAtLastSweep = count;
				return false;
			}
			this.retired = true;
			if (this.active.get() != 0 || this.started.sum() != count) {
				this.retired = false;
				return false;
			}
			return true;
		}

		void remove() {
			this.registry.remove(this.gauge);
			for (Meter timer : this.timers.values()) {
				this.registry.remove(timer);
			}
		}

		private static String orUnknown(@Nullable String value) {
			return (value != null) ? value : UNKNOWN;
		}

	}

}
