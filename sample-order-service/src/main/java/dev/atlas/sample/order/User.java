package dev.atlas.sample.order;

/**
 * A user as {@code user-service} returns it.
 *
 * @param id the user id
 * @param name the user's name
 * @param servedBy the instance that answered
 * @param received the routing headers the call arrived with at user-service ({@code null}
 * from an older user-service)
 */
public record User(long id, String name, ServedBy servedBy, Received received) {

	/**
	 * The identity of the {@code user-service} instance that answered.
	 *
	 * @param instanceId its instance id
	 * @param host its registered host
	 * @param port its port
	 * @param tag its version tag (empty = untagged)
	 * @param cluster its cluster (empty = none)
	 * @param weight its published weight
	 */
	public record ServedBy(String instanceId, String host, int port, String tag, String cluster, double weight) {

		/**
		 * @return {@code host:port}, the key that identifies an instance across
		 * registries
		 */
		public String address() {
			return this.host + ":" + this.port;
		}

	}

	/**
	 * The routing headers a call arrived with at user-service ({@code null} = absent).
	 *
	 * @param version the {@code X-Service-Version} header
	 * @param caller the {@code X-Caller} header
	 */
	public record Received(String version, String caller) {
	}

}
