package dev.atlas.sample.user;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * What this instance says about itself, under {@code sample.*}; the same values are
 * published as registry metadata (see {@code user-service.yml}).
 *
 * @param instanceId the instance id registered in ZooKeeper;
 * {@link UserServiceApplication#application()} sets a random one (when absent, servedBy
 * reports host:port)
 * @param host the host this instance registers and reports
 * @param weight the routing weight published as metadata {@code weight}
 * @param tag the version tag published as metadata {@code version}; empty = untagged
 * @param cluster the cluster published as metadata {@code zone}; empty = none
 * @param maintenance published as metadata {@code maintenance}: {@code true} asks callers
 * that filter on it (order-service does) to leave this instance out
 * @param delay how long {@code GET /users/{id}} waits before it answers (so also the
 * first hop of {@code GET /users/{id}/next}): a slow instance, e.g.
 * {@code --sample.delay=200ms}, for the load-aware strategies; {@code 0} (the default)
 * answers at once; a negative value is read as {@code 0}
 * @param capacity how many {@code GET /users/{id}} this instance serves at once: above
 * it, a request is answered 503 at once (a capped instance with no queue, for overload
 * tests, e.g. {@code --sample.capacity=4}); {@code 0} (the default) for no cap
 */
@ConfigurationProperties("sample")
public record SampleProperties(String instanceId, @DefaultValue("127.0.0.1") String host,
		@DefaultValue("1") double weight, @DefaultValue("") String tag, @DefaultValue("") String cluster,
		@DefaultValue("false") boolean maintenance, @DefaultValue("0s") Duration delay,
		@DefaultValue("0") int capacity) {
}
