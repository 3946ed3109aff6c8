package dev.atlas.loadbalancer.choice;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.spi.AllZeroWeightsPolicy;
import dev.atlas.loadbalancer.spi.PickContext;
import dev.atlas.loadbalancer.spi.StrategySettings;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.loadbalancer.Request;

import static dev.atlas.loadbalancer.TestInstances.SERVICE;

/** A pick context with set headers, in-flight counts and latencies, by position. */
final class TestPickContext implements PickContext {

	final Map<String, String> headers = new HashMap<>();

	final int[] inFlight;

	final double[] peakEwma;

	long serviceInFlight = -1;

	@Nullable Request<?> request;

	TestPickContext(int size) {
		this.inFlight = new int[size];
		this.peakEwma = new double[size];
		Arrays.fill(this.peakEwma, Double.NaN);
	}

	static StrategySettings settings(MeterRegistry meters) {
		return new StrategySettings(SERVICE, new InstanceAttributesParser(SERVICE, "version", meters),
				AllZeroWeightsPolicy.FAIL_OPEN, meters);
	}

	TestPickContext header(String name, String value) {
		this.headers.put(name, value);
		return this;
	}

	@Override
	public @Nullable Request<?> request() {
		return this.request;
	}

	@Override
	public long serviceInFlight() {
		return this.serviceInFlight;
	}

	@Override
	public @Nullable String header(String lowerCaseName) {
		return this.headers.get(lowerCaseName);
	}

	@Override
	public int inFlight(int position) {
		return this.inFlight[position];
	}

	@Override
	public double latencyMillis(int position) {
		return Double.NaN;
	}

	@Override
	public double peakEwmaMillis(int position, long nowNanos) {
		return this.peakEwma[position];
	}

}
