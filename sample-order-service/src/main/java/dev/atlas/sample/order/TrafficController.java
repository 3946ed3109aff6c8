package dev.atlas.sample.order;

import java.util.Locale;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /traffic} (JSON) and {@code GET /traffic/report} (a plain-text table with a
 * PASS/FAIL verdict): send a burst of untagged calls to {@code user-service} and compare
 * each instance's observed share with the share it should get: its weight's share of the
 * lane that untagged traffic can reach (see {@link ExpectedShares}).
 */
@RestController
public class TrafficController {

	private final TrafficService traffic;

	/**
	 * @param traffic the traffic generator
	 */
	public TrafficController(TrafficService traffic) {
		this.traffic = traffic;
	}

	/**
	 * @param client the client to call through
	 * @param calls how many calls (at most {@value TrafficService#MAX_CALLS})
	 * @param concurrency how many threads send them
	 * @return per-instance counts, expected and observed shares
	 * @throws InterruptedException if interrupted
	 */
	@GetMapping("/traffic")
	public TrafficService.Traffic traffic(@RequestParam(defaultValue = "rest-template") String client,
			@RequestParam(defaultValue = "1000") int calls, @RequestParam(defaultValue = "4") int concurrency)
			throws InterruptedException {
		return this.traffic.send(ClientType.of(client), calls, concurrency);
	}

	/**
	 * @param client the client to call through
	 * @param calls how many calls
	 * @param concurrency how many threads send them
	 * @param tolerance the largest accepted gap between observed and expected share, in
	 * percentage points
	 * @return a table and a {@code RESULT: PASS} or {@code RESULT: FAIL} line
	 * @throws InterruptedException if interrupted
	 */
	@GetMapping(path = "/traffic/report", produces = MediaType.TEXT_PLAIN_VALUE)
	public String report(@RequestParam(defaultValue = "rest-template") String client,
			@RequestParam(defaultValue = "1000") int calls, @RequestParam(defaultValue = "4") int concurrency,
			@RequestParam(defaultValue = "3") double tolerance) throws InterruptedException {
		return render(this.traffic.send(ClientType.of(client), calls, concurrency), tolerance);
	}

	/**
	 * @param ex a rejected parameter, e.g. too many calls
	 * @return a 400 problem naming the parameter
	 */
	@ExceptionHandler(IllegalArgumentException.class)
	public ProblemDetail badRequest(IllegalArgumentException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, ex.getMessage());
	}

	static String render(TrafficService.Traffic result, double tolerance) {
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT, "client: %s (%d calls, %d failed)%n", result.client(), result.calls(),
				result.failures()));
		out.append(String.format(Locale.ROOT, "%-21s %-5s %6s  %8s  %8s%n", "instance", "tag", "weight", "expected",
				"observed"));
		double maxDeviation = 0;
		for (TrafficService.InstanceShare row : result.instances()) {
			double deviation = Math.abs(row.observedShare() - row.expectedShare()) * 100;
			maxDeviation = Math.max(maxDeviation, deviation);
			out.append(String.format(Locale.ROOT, "%-21s %-5s %6s  %6.1f %%  %6.1f %%%n", row.host() + ":" + row.port(),
					GrayReport.tagLabel(row.tag()), formatWeight(row.weight()), row.expectedShare() * 100,
					row.observedShare() * 100));
		}
		if (result.firstError() != null) {
			out.append("first error: ").append(result.firstError()).append('\n');
		}
		boolean pass = result.failures() == 0 && !result.instances().isEmpty() && maxDeviation <= tolerance;
		out.append(String.format(Locale.ROOT, "RESULT: %s (max deviation %.1f points, tolerance %.1f)%n",
				pass ? "PASS" : "FAIL", maxDeviation, tolerance));
		return out.toString();
	}

	private static String formatWeight(double weight) {
		return (weight == Math.rint(weight)) ? String.valueOf((long) weight)
				: String.format(Locale.ROOT, "%.2f", weight);
	}

}
