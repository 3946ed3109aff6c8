package dev.atlas.sample.user;

import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /users/{id}}: a made-up user plus the identity of the instance that served it.
 */
@RestController
public class UserController {

    private final SampleProperties sample;

    private volatile int port;

    /**
     * @param sample this instance's sample properties
     */
    public UserController(SampleProperties sample) {
        this.sample = sample;
    }

    /**
     * Remembers the port the web server actually listens on ({@code server.port=0} included).
     * @param event the web server's initialization event
     */
    @EventListener
    public void onWebServerInitialized(WebServerInitializedEvent event) {
        if (event.getApplicationContext().getServerNamespace() == null) {
            this.port = event.getWebServer().getPort();
        }
    }

    /**
     * @param id the user id
     * @return the user, with {@code servedBy} naming this instance
     */
    @GetMapping("/users/{id}")
    public User user(@PathVariable long id) {
        ServedBy servedBy = new ServedBy(instanceId(), sample.host(), port, sample.tag(),
                sample.cluster(), sample.weight());
        return new User(id, "user-" + id, servedBy);
    }

    private String instanceId() {
        String id = sample.instanceId();
        return (id == null || id.isBlank()) ? sample.host() + ":" + port : id;
    }

    /**
     * The response body.
     * @param id the user id
     * @param name the user's name
     * @param servedBy the instance that answered
     */
    public record User(long id, String name, ServedBy servedBy) {
    }

    /**
     * Who answered the call.
     * @param instanceId the instance id
     * @param host the registered host
     * @param port the actual port
     * @param tag the version tag (empty = untagged)
     * @param cluster the cluster (empty = none)
     * @param weight the published weight
     */
    public record ServedBy(String instanceId, String host, int port, String tag, String cluster,
            double weight) {
    }

}
