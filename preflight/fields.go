package preflight

import "strings"

// The server names a refusal by its error code and, for the general codes (10052
// invalid config, 10157 pedantic, 10094 delivery policy, 10012 consumer update), by
// its reason text. These tables turn either into the attributes that caused it, most
// specific first; the finding points at the first one the file sets, else the block.

var streamCodeFields = map[uint16][]string{
	10021: {"mirror.external.api", "sources[].external.api"},
	10022: {"mirror.external.deliver", "sources[].external.deliver"},
	10024: {"mirror.external.deliver", "sources[].external.deliver"},
	10026: {"max_consumers"},
	10028: {"max_bytes"},
	10030: {"max_msg_size", "mirror"},
	10031: {"sources", "mirror"},
	10033: {"mirror.filter_subject", "mirror"},
	10034: {"subjects", "mirror"},
	10046: {"max_msg_size", "sources"},
	10047: {"max_bytes"},
	10055: {"mirror"},
	10065: {"subjects"},
	10074: {"num_replicas"},
	10113: {"max_bytes"},
	10122: {"max_bytes"},
	10133: {"num_replicas"},
	10140: {"sources"},
	10141: {"sources[].name", "sources"},
	10142: {"mirror.name", "mirror"},
	10143: {"first_seq"},
	10144: {"sources[].filter_subject", "sources"},
	10145: {"sources[].subject_transforms[].src", "sources[].subject_transforms", "sources"},
	10146: {"sources[].subject_transforms[].dest", "sources[].subject_transforms", "sources"},
	10147: {"sources[].subject_transforms", "sources"},
	10150: {"mirror.filter_subject", "mirror.subject_transforms", "mirror"},
	10151: {"mirror.subject_transforms[].src", "mirror.subject_transforms", "mirror"},
	10152: {"mirror.subject_transforms", "mirror"},
	10154: {"mirror.subject_transforms[].dest", "mirror.subject_transforms", "mirror"},
	10155: {"subject_transform.src", "subject_transform"},
	10156: {"subject_transform.dest", "subject_transform"},
	10173: {"allow_msg_counter", "mirror"},
	10186: {"allow_msg_schedules", "mirror"},
	10187: {"allow_msg_schedules", "sources"},
	10198: {"allow_atomic", "mirror"},
	10209: {"allow_batched", "mirror"},
	10213: {"mirror.consumer", "mirror"},
	10214: {"mirror.consumer", "mirror"},
	10215: {"sources[].consumer", "sources"},
	10216: {"sources[].consumer", "sources"},
	10217: {"sources[].consumer", "sources"},
}

// reasonFields maps words of a reason text to attributes; the first match wins, so
// longer, more specific phrases come first.
type reasonFields struct {
	words string
	paths []string
}

var streamReasons = []reasonFields{
	{"description", []string{"description"}},
	{"metadata", []string{"metadata"}},
	{"retention", []string{"retention"}},
	{"discard new per subject requires max msgs", []string{"max_msgs_per_subject", "discard_new_per_subject"}},
	{"discard new per subject", []string{"discard_new_per_subject", "discard"}},
	{"counter stream cannot use discard", []string{"discard", "allow_msg_counter"}},
	{"counter stream cannot use message ttl", []string{"allow_msg_ttl", "allow_msg_counter"}},
	{"counter stream cannot use message schedules", []string{"allow_msg_schedules", "allow_msg_counter"}},
	{"counter stream", []string{"allow_msg_counter"}},
	{"message counter setting", []string{"allow_msg_counter"}},
	{"discard", []string{"discard"}},
	{"compression", []string{"compression"}},
	{"storage type", []string{"storage"}},
	{"replicas", []string{"num_replicas"}},
	{"max_msgs_per_subject", []string{"max_msgs_per_subject"}},
	{"max_msgs", []string{"max_msgs"}},
	{"max_bytes", []string{"max_bytes"}},
	{"max_msg_size", []string{"max_msg_size"}},
	{"max_consumers", []string{"max_consumers"}},
	{"duplicate window", []string{"duplicate_window", "max_age"}},
	{"duplicates window", []string{"duplicate_window", "max_age"}},
	{"max age", []string{"max_age"}},
	{"roll-ups require the purge", []string{"allow_rollup_hdrs", "deny_purge"}},
	{"subject delete marker", []string{"subject_delete_marker_ttl"}},
	{"delete markers forbidden on mirrors", []string{"subject_delete_marker_ttl"}},
	{"message scheduling", []string{"allow_msg_schedules"}},
	{"message schedules", []string{"allow_msg_schedules"}},
	{"async persist", []string{"persist_mode"}},
	{"persist mode", []string{"persist_mode"}},
	{"external api prefix", []string{"mirror.external.api", "sources[].external.api"}},
	{"detected cycle", []string{"sources", "mirror"}},
	{"republish", []string{"republish"}},
	{"implicit republish", []string{"republish"}},
	{"subject", []string{"subjects"}},
	{"preferred server", []string{"placement.preferred", "placement"}},
	{"unseal", []string{"sealed"}},
	{"deny message deletes", []string{"deny_delete"}},
	{"deny purge", []string{"deny_purge"}},
	{"message ttl", []string{"allow_msg_ttl"}},
	{"change to limits violates consumers", []string{"consumer_limits.max_ack_pending", "consumer_limits.inactive_threshold", "consumer_limits"}},
	{"origin stream has direct get", []string{"mirror_direct", "mirror"}},
	{"name must match", nil},
}

var consumerCodeFields = map[uint16][]string{
	10026: {},
	10079: {"deliver_subject"},
	10080: {"max_waiting"},
	10081: {"deliver_subject"},
	10082: {"max_ack_pending", "ack_policy"},
	10083: {"idle_heartbeat"},
	10084: {"ack_policy"},
	10086: {"rate_limit_bps"},
	10087: {"max_waiting"},
	10088: {"idle_heartbeat"},
	10089: {"flow_control"},
	10090: {"direct"},
	10091: {"direct"},
	10093: {"filter_subject", "filter_subjects"},
	10095: {"sample_freq"},
	10098: {"ack_policy"},
	10099: {"filter_subject", "filter_subjects"},
	10100: {"filter_subject", "filter_subjects"},
	10101: {"deliver_policy"},
	10107: {"description"},
	10108: {"flow_control", "idle_heartbeat"},
	10112: {"deliver_subject"},
	10114: {"max_batch"},
	10115: {"max_expires"},
	10116: {"backoff", "max_deliver"},
	10121: {"max_ack_pending"},
	10125: {"max_batch"},
	10074: {"num_replicas"},
	10126: {"num_replicas"},
	10133: {"num_replicas"},
	10134: {"num_replicas"},
	10135: {"metadata"},
	10136: {"filter_subject", "filter_subjects"},
	10138: {"filter_subjects", "filter_subject"},
	10139: {"filter_subjects"},
	10153: {"inactive_threshold"},
	10159: {"priority_policy"},
	10160: {"priority_groups"},
	10161: {"priority_groups"},
	10162: {"priority_groups"},
	10178: {"priority_groups", "deliver_subject"},
	10181: {"ack_policy"},
	10182: {"replay_policy"},
	10183: {"ack_wait"},
	10184: {"backoff"},
	10196: {"priority_groups", "priority_policy"},
	10197: {"priority_timeout"},
	10218: {"deliver_subject", "ack_policy"},
	10219: {"flow_control", "ack_policy"},
	10220: {"max_ack_pending", "ack_policy"},
	10221: {"ack_wait", "backoff", "ack_policy"},
	10222: {"max_deliver", "ack_policy"},
}

var consumerReasons = []reasonFields{
	{"first backoff value", []string{"backoff", "ack_wait"}},
	{"max_deliver", []string{"max_deliver"}},
	{"max_waiting", []string{"max_waiting"}},
	{"max waiting", []string{"max_waiting"}},
	{"max_ack_pending", []string{"max_ack_pending"}},
	{"max_request_batch", []string{"max_batch"}},
	{"max_batch", []string{"max_batch"}},
	{"max_expires", []string{"max_expires"}},
	{"max_bytes", []string{"max_bytes"}},
	{"idle_heartbeat", []string{"idle_heartbeat"}},
	{"heartbeat", []string{"idle_heartbeat"}},
	{"heart beats", []string{"idle_heartbeat"}},
	{"inactive_threshold", []string{"inactive_threshold"}},
	{"priority_timeout", []string{"priority_timeout"}},
	{"optional start sequence", []string{"opt_start_seq", "deliver_policy"}},
	{"optional sequence", []string{"opt_start_seq", "deliver_policy"}},
	{"optional start time", []string{"opt_start_time", "deliver_policy"}},
	{"optional time", []string{"opt_start_time", "deliver_policy"}},
	{"deliver policy", []string{"deliver_policy"}},
	{"delivery policy", []string{"deliver_policy"}},
	{"ack policy", []string{"ack_policy"}},
	{"replay policy", []string{"replay_policy"}},
	{"flow control", []string{"flow_control"}},
	{"storage type", []string{"mem_storage"}},
	{"start sequence", []string{"opt_start_seq"}},
	{"start time", []string{"opt_start_time"}},
	{"metadata", []string{"metadata"}},
	{"description", []string{"description"}},
	{"subject", []string{"filter_subject", "filter_subjects"}},
}

// refusedFields returns the attributes a refusal names, most specific first; none
// means the block as a whole.
func refusedFields(consumer bool, code uint16, reason string) []string {
	codes, reasons := streamCodeFields, streamReasons
	if consumer {
		codes, reasons = consumerCodeFields, consumerReasons
	}
	if paths, ok := codes[code]; ok {
		return paths
	}
	r := strings.ToLower(reason)
	for _, rf := range reasons {
		if strings.Contains(r, rf.words) {
			return rf.paths
		}
	}
	return nil
}
