package dev.atlas.sample.order;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /gray} (JSON) and {@code GET /gray/report} (a plain-text table with a
 * PASS/FAIL verdict): run one gray scenario (see {@link GrayReport}), e.g.
 * {@code /gray/report?version=v2&calls=300&expect=v2} (every hop on v2),
 * {@code /gray/report?calls=300&expect=v1} (no header: baseline),
 * {@code /gray/report?calls=3000&expect-share=v2:10:2} (a 10 % canary, hop 1), or
 * {@code /gray/report?version=v2&path=orders&client=rest-template&expect=v2} (one hop).
 */
@RestController
public class GrayController {

	private final GrayReport report;

	/**
	 * @param report the scenario runner
	 */
	public GrayController(GrayReport report) {
		this.report = report;
	}

	/**
	 * @param version the {@code X-Service-Version} header to send; absent or blank for
	 * none
	 * @param path {@code chain} (two hops, default) or {@code orders} (one hop)
	 * @param client the client of the {@code orders} path
	 * @param calls how many calls
	 * @param concurrency how many threads send them
	 * @param expect the tag every hop must land on ({@code untagged} or {@code -} for
	 * none)
	 * @param expectShare hop 1's expected share of a tag, {@code tag:percent:tolerance}
	 * @param scenario a name for the report
	 * @return the tag counts per hop and the verdict
	 * @throws InterruptedException if interrupted
	 */
	@GetMapping("/gray")
	public GrayReport.Result gray(@RequestParam(required = false) String version,
			@RequestParam(defaultValue = "chain") String path, @RequestParam(defaultValue = "feign") String client,
			@RequestParam(defaultValue = "200") int calls, @RequestParam(defaultValue = "4") int concurrency,
			@RequestParam(required = false) String expect,
			@RequestParam(name = "expect-share", required = false) String expectShare,
			@RequestParam(required = false) String scenario) throws InterruptedException {
		return this.report.run(scenario(version, path, client, calls, concurrency, expect, expectShare, scenario));
	}

	/**
	 * The same as {@link #gray}, as the demo prints it.
	 * @param version the {@code X-Service-Version} header to send; absent or blank for
	 * none
	 * @param path {@code chain} (two hops, default) or {@code orders} (one hop)
	 * @param client the client of the {@code orders} path
	 * @param calls how many calls
	 * @param concurrency how many threads send them
	 * @param expect the tag every hop must land on ({@code untagged} or {@code -} for
	 * none)
	 * @param expectShare hop 1's expected share of a tag, {@code tag:percent:tolerance}
	 * @param scenario a name for the report
	 * @return a table and a {@code RESULT: PASS} or {@code RESULT: FAIL} line
	 * @throws InterruptedException if interrupted
	 */
	@GetMapping(path = "/gray/report", produces = MediaType.TEXT_PLAIN_VALUE)
	public String grayReport(@RequestParam(required = false) String version,
			@RequestParam(defaultValue = "chain") String path, @RequestParam(defaultValue = "feign") String client,
			@RequestParam(defaultValue = "200") int calls, @RequestParam(defaultValue = "4") int concurrency,
			@RequestParam(required = false) String expect,
			@RequestParam(name = "expect-share", required = false) String expectShare,
			@RequestParam(required = false) String scenario) throws InterruptedException {
		return GrayReport.render(gray(version, path, client, calls, concurrency, expect, expectShare, scenario));
	}

	/**
	 * @param ex a rejected parameter
	 * @return a 400 problem naming it
	 */
	@ExceptionHandler(IllegalArgumentException.class)
	public ProblemDetail badRequest(IllegalArgumentException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, ex.getMessage());
	}

	static GrayReport.Scenario scenario(@Nullable String version, String path, String client, int calls,
			int concurrency, @Nullable String expect, @Nullable String expectShare, @Nullable String label) {
		String sent = (version == null || version.isBlank()) ? null : version.trim();
		boolean chain = switch (path.trim().toLowerCase(Locale.ROOT)) {
			case "chain" -> true;
			case "orders" -> false;
			default -> throw new IllegalArgumentException("path must be chain or orders, was '" + path + "'");
		};
		String expectTag = null;
		if (expect != null && !expect.isBlank()) {
			String tag = expect.trim();
			expectTag = (tag.equalsIgnoreCase("untagged") || tag.equals("-")) ? "" : ExpectedShares.normalize(tag);
		}
		GrayReport.ShareExpectation share = (expectShare == null || expectShare.isBlank()) ? null
				: GrayReport.ShareExpectation.parse(expectShare.trim());
		String name = (label != null && !label.isBlank()) ? label.trim() : (sent != null)
				? GrayReport.VERSION_HEADER + ": " + sent : "no " + GrayReport.VERSION_HEADER + " header";
		return new GrayReport.Scenario(name, sent, chain, ClientType.of(client), calls, concurrency, expectTag, share);
	}

}
