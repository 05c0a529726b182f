"""A fault-injection soak over the distributed pipeline: a clean run of an input as the
reference, then the same input while services are killed and the broker and the store go down,
then a comparison of what each run published (lost, duplicated, redelivered, recovered)."""
