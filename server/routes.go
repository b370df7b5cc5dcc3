package server

// routes lists every endpoint in one place.
func (s *Server) routes() {
	e := s.engine
	e.Use(s.recovery())
	e.POST("/sync", s.authenticate("sync"), s.sync())
	e.POST("/finalize", s.authenticate("finalize"), s.finalize())
	e.POST("/customize", s.authenticate("customize"), s.customize())
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", s.metrics())
	// A known path with a wrong method is 405 with an Allow header, not 404.
	e.HandleMethodNotAllowed = true
	e.NoMethod(s.methodNotAllowed)
}
