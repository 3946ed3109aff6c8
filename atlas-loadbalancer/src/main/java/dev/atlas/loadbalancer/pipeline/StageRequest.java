package dev.atlas.loadbalancer.pipeline;

import dev.atlas.loadbalancer.context.RequestHeaders;
import dev.atlas.loadbalancer.context.RoutingContext;
import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import org.jspecify.annotations.Nullable;
import reactor.util.context.ContextView;

import org.springframework.cloud.client.loadbalancer.Request;

/**
 * The request as the stage's filters see it when the stage is subscribed to as a supplier
 * (not applied inline by {@link AtlasLoadBalancer}): one per list emitted, holding the
 * candidates the stage emits for it. The routing context is resolved on first use.
 */
final class StageRequest implements StagedRequest {

	private final @Nullable Request<?> request;

	private final ContextView reactorContext;

	private final @Nullable RoutingContext onCallingThread;

	private InstanceSnapshot candidates = InstanceSnapshot.EMPTY;

	private boolean resolved;

	private @Nullable RoutingContext context;

	StageRequest(@Nullable Request<?> request, ContextView reactorContext, @Nullable RoutingContext onCallingThread) {
		this.request = request;
		this.reactorContext = reactorContext;
		this.onCallingThread = onCallingThread;
	}

	@Override
	public @Nullable Request<?> request() {
		return this.request;
	}

	@Override
	public @Nullable String header(String lowerCaseName) {
		if (!this.resolved) {
			this.context = RoutingHeaders.context(this.reactorContext, this.onCallingThread);
			this.resolved = true;
		}
		return RequestHeaders.resolve(this.request, this.context, lowerCaseName);
	}

	@Override
	public void candidates(InstanceSnapshot candidates) {
		this.candidates = candidates;
	}

	@Override
	public InstanceSnapshot candidates() {
		return this.candidates;
	}

}
