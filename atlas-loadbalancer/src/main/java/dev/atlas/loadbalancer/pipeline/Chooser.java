package dev.atlas.loadbalancer.pipeline;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.context.RoutingContextHolder;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.InFlightLimit;
import dev.atlas.loadbalancer.spi.LiveStats;
import dev.atlas.loadbalancer.spi.NoInstanceReason;
import dev.atlas.loadbalancer.spi.PickContext;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.RetryAwareServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.SelectedInstanceCallback;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;

/**
 * One service's choice with one version of its routing over one supplier chain: what the
 * subscriber that makes a request's choice talks to, and the only thing it talks to (the
 * choosing operator's, {@link FirstListChoice}, for {@link AtlasLoadBalancer#choose}; the
 * waiting one, {@link AwaitedChoice}, for {@link AtlasLoadBalancer#chooseAndWait}). It
 * turns the first candidate list of the chain into the response (applying Atlas's stage
 * inline when the chain allows, then the version's strategy), tells the supplier that
 * wants to know the chosen instance, knows why a response is empty
 * ({@link NoInstanceResponse}), and reads the service's live statistics for the strategy
 * ({@link PickContext positions} refer to the candidates the request holds).
 *
 * <p>
 * Made by {@link AtlasLoadBalancer} once per version and supplier object, never per
 * request, so holding the version costs a request nothing. Immutable and thread-safe; the
 * per-request state (the request, its candidates) lives in the subscriber
 * ({@link ChoiceRequest}).
 */
final class Chooser {

	/**
	 * How many more times the strategy is asked when its choice is at the per-instance
	 * limit, before the candidates are scanned in list order.
	 */
	static final int REPEATED_CHOICES = 2;

	/** The version of the routing read for the requests this chooser serves. */
	final Pipeline version;

	/** The top of the supplier chain, told the choice if it wants to know. */
	final ServiceInstanceListSupplier supplier;

	/** Atlas's stage when it is applied inline, else {@code null}. */
	private final @Nullable AtlasServiceInstanceListSupplier inline;

	/** Whether the inline stage shares the load balancer's {@link ServicePipeline}. */
	private final boolean inlineSharesVersion;

	/** Whether Atlas's stage is in the chain below a supplier that is not Spring's. */
	private final boolean stageBelow;

	private final ServicePipeline pipeline;

	private final LiveStats stats;

	private final InFlightLimit limit;

	private final Map<NoInstanceReason, NoInstanceResponse> noInstance;

	/** What of the chain is told the choice, or {@code null} when nothing is. */
	private final @Nullable SelectedInstanceCallback told;

	/**
	 * @param pipeline the service's routing, shared with Atlas's stage when the
	 * auto-configuration builds them
	 * @param version the version of {@code pipeline} read for the requests
	 * @param supplier the top of the supplier chain
	 * @param stats the service's live per-instance statistics
	 * @param limit the service's per-instance in-flight limit
	 * @param noInstance the service's empty response per reason
	 */
	Chooser(ServicePipeline pipeline, Pipeline version, ServiceInstanceListSupplier supplier, LiveStats stats,
			InFlightLimit limit, Map<NoInstanceReason, NoInstanceResponse> noInstance) {
		this.pipeline = pipeline;
		this.version = version;
		this.supplier = supplier;
		this.stats = stats;
		this.limit = limit;
		this.noInstance = noInstance;
		this.inline = inlineStage(supplier);
		this.inlineSharesVersion = this.inline != null && this.inline.pipeline() == pipeline;
		this.stageBelow = this.inline == null && AtlasServiceInstanceListSupplier.find(supplier) != null;
		this.told = SelectedInstanceCallbacks.told(supplier);
	}

	/**
	 * Atlas's stage when it is the top of the chain, or right below Spring's retry-aware
	 * supplier (whose only job, leaving out the previously failed instance, Atlas's retry
	 * avoidance does too, by id rather than by {@code equals}): then the stage is applied
	 * inside the subscriber that makes the choice, one Reactor operator less per request.
	 * Spring's supplier is matched by exact class (a subclass may do more); any other
	 * supplier on top is subscribed to as it is.
	 */
	private static @Nullable AtlasServiceInstanceListSupplier inlineStage(ServiceInstanceListSupplier supplier) {
		ServiceInstanceListSupplier candidate = supplier;
		if (candidate.getClass() == RetryAwareServiceInstanceListSupplier.class) {
			candidate = ((RetryAwareServiceInstanceListSupplier) candidate).getDelegate();
		}
		return (candidate instanceof AtlasServiceInstanceListSupplier stage) ? stage : null;
	}

	/**
	 * The choice for one request: one Reactor operator over the lists of the chain (the
	 * stage's delegate when the stage is applied inline).
	 * @param request the request; may be {@code null}
	 * @return the {@code Mono} of the response, through Reactor's assembly hooks
	 */
	@SuppressWarnings({ "unchecked", "rawtypes" })
	Mono<Response<ServiceInstance>> choose(@Nullable Request request) {
		if (this.inline != null) {
			// Read once, here on the calling thread: EMPTY when it serves no routed
			// request, so that the choice does not read the thread-local again.
			RoutingContext onCallingThread = RoutingContextHolder.get();
			return FirstListChoice.of(lists(request), request,
					(onCallingThread != null) ? onCallingThread : RoutingContext.EMPTY, this);
		}
		return FirstListChoice.of(lists(request), request, null, this);
	}

	/**
	 * The choice for one request, waited for on the calling thread
	 * ({@link AwaitedChoice}), with the calling thread's routing context read once.
	 * @param request the request; may be {@code null}
	 * @return the response, never {@code null}
	 */
	Response<ServiceInstance> chooseAndWait(@Nullable Request<?> request) {
		return AwaitedChoice.await(lists(request), request, RoutingContextHolder.get(), this);
	}

	/**
	 * The lists a request's choice subscribes to: the stage's delegate's when the stage
	 * is applied inline, else the top of the chain's.
	 */
	@SuppressWarnings({ "unchecked", "rawtypes" })
	private Flux<List<ServiceInstance>> lists(@Nullable Request request) {
		AtlasServiceInstanceListSupplier stage = this.inline;
		if (stage != null) {
			return stage.delegateLists(request);
		}
		return (request != null) ? this.supplier.get(request) : this.supplier.get();
	}

	/**
	 * Whether a request's subscriber must carry the version in its Reactor
	 * {@code Context}: when Atlas's stage runs as a supplier below the top of the chain
	 * (possibly on another thread), it finds there the version read for the request, so
	 * that a request sees one version of the rules on this path too (at the cost of a
	 * {@code Context} per request, on this path only).
	 * @return {@code true} when the stage is below the top and not inline
	 */
	boolean carriesVersion() {
		return this.stageBelow;
	}

	/**
	 * A subscriber's {@code Context} with the version of the routing read for the
	 * request, under the service's {@link ServicePipeline} (see
	 * {@link #carriesVersion()}).
	 * @param downstream the downstream subscriber's context
	 * @return a new context
	 */
	Context withVersion(Context downstream) {
		return downstream.put(this.pipeline, this.version);
	}

	/**
	 * The response for the first candidate list of the chain. Allocates nothing but the
	 * response once the list's snapshot and every step's work on it are memoized.
	 * @param <R> the request's type
	 * @param list the list as the chain emitted it
	 * @param request the request: the filters and the strategy read it, and it holds the
	 * candidates that the strategy's positions refer to
	 * @return the chosen instance, or a {@link NoInstanceResponse}
	 */
	<R extends StagedRequest & PickContext> Response<ServiceInstance> respond(List<ServiceInstance> list, R request) {
		AtlasServiceInstanceListSupplier stage = this.inline;
		NoInstanceReason emptyBecause = null;
		if (stage != null) {
			// With the version the load balancer read when the two share their
			// ServicePipeline (as Atlas's auto-configuration builds them), else with the
			// stage's own version in force.
			emptyBecause = stage.select(list, request,
					this.inlineSharesVersion ? this.version : stage.pipeline().current());
		}
		else {
			request.candidates(this.version.snapshots.snapshotOf(list));
		}
		InstanceSnapshot candidates = request.candidates();
		int index = this.version.strategy.choose(candidates, request);
		if (index < 0) {
			return noInstance(whyNone(candidates, emptyBecause));
		}
		int max = this.limit.max();
		if (max != InFlightLimit.OFF) {
			index = withinLimit(candidates, request, index, max);
			if (index < 0) {
				this.limit.saturated();
				return noInstance(NoInstanceReason.SATURATED);
			}
		}
		ServiceInstance chosen = candidates.get(index);
		SelectedInstanceCallback callback = this.told;
		if (callback != null) {
			callback.selectedServiceInstance(chosen);
		}
		return new DefaultResponse(chosen);
	}

	/**
	 * The strategy's choice when the instance is below the per-instance limit, else
	 * another candidate that is: the strategy's next choices (a new draw, or the next in
	 * its order; {@value #REPEATED_CHOICES} of them), then the candidates after its first
	 * choice in list order (those with a weight, unless none has one). A request sent by
	 * an HTTP client reserves the slot it gets ({@link LiveStats#tryReserve}: its start
	 * then claims it); a choice made by hand
	 * ({@code LoadBalancerClient.choose(serviceId)}, whose request Atlas never sees start
	 * or end) only compares, so it holds no slot.
	 * @return a position in {@code candidates}, or {@code -1} when every candidate is at
	 * the limit
	 */
	private <R extends StagedRequest & PickContext> int withinLimit(InstanceSnapshot candidates, R request, int chosen,
			int max) {
		boolean reserve = reserves(request.request());
		if (admits(candidates, chosen, max, reserve)) {
			return chosen;
		}
		for (int again = 0; again < REPEATED_CHOICES; again++) {
			int next = this.version.strategy.choose(candidates, request);
			if (next >= 0 && next != chosen && admits(candidates, next, max, reserve)) {
				return next;
			}
		}
		boolean weighted = candidates.totalEffectiveWeight() > 0;
		int size = candidates.size();
		for (int step = 1; step <= size; step++) {
			int position = (chosen + step) % size;
			if ((!weighted || candidates.effectiveWeight(position) > 0) && admits(candidates, position, max, reserve)) {
				return position;
			}
		}
		return -1;
	}

	private boolean admits(InstanceSnapshot candidates, int position, int max, boolean reserve) {
		return reserve ? this.stats.tryReserve(candidates, position, max)
				: this.stats.inFlight(candidates, position) < max;
	}

	/**
	 * Whether a request's start and end reach Atlas's request lifecycle: an HTTP client's
	 * request (RestTemplate, RestClient, Feign, WebClient, the gateways), whose context
	 * carries its request data.
	 */
	private static boolean reserves(@Nullable Request<?> request) {
		return request != null && request.getContext() instanceof RequestDataContext;
	}

	/**
	 * Why the strategy chose none (only on that path: never on a request that gets an
	 * instance).
	 * @param candidates what the strategy chose from
	 * @param emptyBecause why the inline stage left no candidate, {@code null} when it
	 * did not run inline or left some
	 */
	private NoInstanceReason whyNone(InstanceSnapshot candidates, @Nullable NoInstanceReason emptyBecause) {
		if (!candidates.isEmpty()) {
			return (candidates.totalEffectiveWeight() > 0) ? NoInstanceReason.NONE_CHOSEN
					: NoInstanceReason.ALL_WEIGHTS_ZERO;
		}
		if (emptyBecause != null) {
			return emptyBecause;
		}
		// Atlas's stage ran in a chain it does not top (not inline): it cannot say.
		return this.stageBelow ? NoInstanceReason.NO_CANDIDATES : NoInstanceReason.NO_INSTANCES;
	}

	/**
	 * The response when the chain completes without a list.
	 * @return the service's shared response for {@link NoInstanceReason#NO_INSTANCES}
	 */
	NoInstanceResponse noList() {
		return noInstance(NoInstanceReason.NO_INSTANCES);
	}

	private NoInstanceResponse noInstance(NoInstanceReason reason) {
		return Objects.requireNonNull(this.noInstance.get(reason), "response for every reason");
	}

	/**
	 * Requests in flight to a candidate (see {@link LiveStats#inFlight}).
	 * @param candidates the request's candidates
	 * @param position a position in {@code candidates}
	 * @return the count, {@code 0} when unknown
	 */
	int inFlight(InstanceSnapshot candidates, int position) {
		return this.stats.inFlight(candidates, position);
	}

	/**
	 * A candidate's failure rate (see {@link LiveStats#failureRate}).
	 * @param candidates the request's candidates
	 * @param position a position in {@code candidates}
	 * @return a ratio in 0..1
	 */
	double failureRate(InstanceSnapshot candidates, int position) {
		return this.stats.failureRate(candidates, position);
	}

	/**
	 * Whether any instance of the service may be failing (see
	 * {@link LiveStats#anyFailing()}).
	 * @return {@code false} when every failure rate is 0
	 */
	boolean anyFailing() {
		return this.stats.anyFailing();
	}

	/**
	 * A candidate's latency average (see {@link LiveStats#latencyMillis}).
	 * @param candidates the request's candidates
	 * @param position a position in {@code candidates}
	 * @return milliseconds, {@code NaN} when unknown
	 */
	double latencyMillis(InstanceSnapshot candidates, int position) {
		return this.stats.latencyMillis(candidates, position);
	}

	/**
	 * A candidate's peak-EWMA latency (see {@link LiveStats#peakEwmaMillis}).
	 * @param candidates the request's candidates
	 * @param position a position in {@code candidates}
	 * @return milliseconds, {@code NaN} when unknown
	 */
	double peakEwmaMillis(InstanceSnapshot candidates, int position) {
		return this.stats.peakEwmaMillis(candidates, position);
	}

	/**
	 * A candidate's peak-EWMA latency, decayed to a time.
	 * @param candidates the request's candidates
	 * @param position a position in {@code candidates}
	 * @param nowNanos {@link #nanoTime()} read once for the pick
	 * @return milliseconds, {@code NaN} when unknown
	 */
	double peakEwmaMillis(InstanceSnapshot candidates, int position, long nowNanos) {
		return this.stats.peakEwmaMillis(candidates, position, nowNanos);
	}

	/**
	 * The statistics' clock.
	 * @return nanoseconds, of an arbitrary origin
	 */
	long nanoTime() {
		return this.stats.nanoTime();
	}

	/**
	 * Requests in flight to the whole service.
	 * @return the count, {@code -1} when unknown
	 */
	long serviceInFlight() {
		return this.stats.serviceInFlight();
	}

}
