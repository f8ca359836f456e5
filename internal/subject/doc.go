// Package subject is the subject and partition-mapping math natsplan shares between the
// language (schema) and the planner (plan): subject intersection, the subjects a
// stream stores under a subject_transform, partitioned mappings and the server's
// partition hash, and the server's rule for stream and consumer names. It depends on
// nothing of natsplan, so both layers above can use it.
package subject
