package dev.atlas.loadbalancer.support;

import org.slf4j.Logger;

/**
 * How Atlas's request-lifecycle callbacks report a failure inside themselves, which they
 * catch so that the request's own outcome reaches the caller: at WARN the first time for
 * its logger, callback and exception class (an Atlas bug shows), then at DEBUG. Keys are
 * remembered in a bounded {@link OncePerKeyLog}. Thread-safe.
 *
 * @since 0.1.0
 */
public final class CallbackFailures {

	private static final OncePerKeyLog REPORTED = new OncePerKeyLog();

	private CallbackFailures() {
	}

	/**
	 * Logs a failure a callback caught.
	 * @param log the callback's logger
	 * @param callback names the callback in the line, e.g. {@code onComplete}
	 * @param failure what it caught
	 */
	public static void swallowed(Logger log, String callback, RuntimeException failure) {
		String key = log.getName() + ' ' + callback + ' ' + failure.getClass().getName();
		if (!REPORTED.once(key, (reported) -> log.warn("{} failed; the request goes on", callback, failure))) {
			log.debug("{} failed; the request goes on", callback, failure);
		}
	}

}
