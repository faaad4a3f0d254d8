static const char* l2x_status_name(int status) {
  switch (status) {
    ${status_cases}
    default: return "unknown status";
  }
}
