package dev.atlas.loadbalancer.choice;

import dev.atlas.loadbalancer.spi.PickContext;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.loadbalancer.Request;

/**
 * The pick context of a choice made without a request: no header, nothing in flight, no
 * latency known. Stateless and thread-safe.
 */
final class NoPickContext implements PickContext {

	static final NoPickContext INSTANCE = new NoPickContext();

	private NoPickContext() {
	}

	@Override
	public @Nullable Request<?> request() {
		return null;
	}

	@Override
	public @Nullable String header(String lowerCaseName) {
		return null;
	}

	@Override
	public int inFlight(int position) {
		return 0;
	}

	@Override
	public double latencyMillis(int position) {
		return Double.NaN;
	}

}
