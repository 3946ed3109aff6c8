package dev.atlas.loadbalancer;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that tests move by hand. */
public final class MutableClock extends Clock {

	private volatile long millis;

	public MutableClock(long millis) {
		this.millis = millis;
	}

	public void advance(Duration duration) {
		this.millis += duration.toMillis();
	}

	public void set(long millis) {
		this.millis = millis;
	}

	@Override
	public long millis() {
		return this.millis;
	}

	@Override
	public Instant instant() {
		return Instant.ofEpochMilli(this.millis);
	}

	@Override
	public ZoneId getZone() {
		return ZoneOffset.UTC;
	}

	@Override
	public Clock withZone(ZoneId zone) {
		return this;
	}

}
