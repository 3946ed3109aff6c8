package dev.atlas.sample.user;

import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * The sample provider: answers {@code GET /users/{id}} and says which instance served the
 * call. Registers in ZooKeeper by default, in Nacos with the {@code nacos} profile.
 *
 * <p>
 * Its configuration lives in {@code user-service.yml} (not {@code application.yml}) so
 * that it can run in the same JVM as other samples; start it through
 * {@link #application()}.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class UserServiceApplication {

	/** The name of this sample's configuration files ({@code user-service.yml}, …). */
	public static final String CONFIG_NAME = "user-service";

	/**
	 * A builder for this application with its configuration name and a fresh instance id
	 * set as defaults; a test can add properties and run it.
	 * @return a new application builder
	 */
	public static SpringApplicationBuilder application() {
		return new SpringApplicationBuilder(UserServiceApplication.class).properties(
				"spring.config.name=" + CONFIG_NAME, "sample.instance-id=" + CONFIG_NAME + "-" + randomSuffix());
	}

	/**
	 * Runs the application.
	 * @param args command-line arguments, e.g.
	 * {@code --server.port=8081 --sample.weight=3}
	 */
	public static void main(String[] args) {
		application().run(args);
	}

	private static String randomSuffix() {
		byte[] bytes = new byte[4];
		ThreadLocalRandom.current().nextBytes(bytes);
		return HexFormat.of().formatHex(bytes);
	}

}
