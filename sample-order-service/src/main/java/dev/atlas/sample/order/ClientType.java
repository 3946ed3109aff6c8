package dev.atlas.sample.order;

import java.util.Arrays;
import java.util.stream.Collectors;

import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;

/**
 * The HTTP clients this sample can call {@code user-service} with, by their
 * request-parameter name.
 */
public enum ClientType {

	/** {@code @LoadBalanced RestTemplate}. */
	REST_TEMPLATE("rest-template"),
	/** {@code RestClient} from a {@code @LoadBalanced RestClient.Builder}. */
	REST_CLIENT("rest-client"),
	/** {@code WebClient} from a {@code @LoadBalanced WebClient.Builder}. */
	WEB_CLIENT("web-client"),
	/** {@code @FeignClient("user-service")}. */
	FEIGN("feign");

	private final String id;

	ClientType(String id) {
		this.id = id;
	}

	/**
	 * @return the name used in requests, e.g. {@code rest-template}
	 */
	public String id() {
		return this.id;
	}

	/**
	 * @param id a client name such as {@code web-client}
	 * @return the client type
	 * @throws ResponseStatusException 400 when the name is unknown
	 */
	public static ClientType of(String id) {
		for (ClientType type : values()) {
			if (type.id.equalsIgnoreCase(id)) {
				return type;
			}
		}
		throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "Unknown client '" + id + "'; use one of "
				+ Arrays.stream(values()).map(ClientType::id).collect(Collectors.joining(", ")));
	}

}
